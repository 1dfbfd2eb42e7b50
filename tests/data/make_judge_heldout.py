"""Generate tests/data/judge_heldout.tsv once (kept for the record, not re-run to tune).

The held-back set for ``agentcade.core.judge.is_match``: how children (heard through speech
recognition) state the answers of the built-in games (猜谜语 riddles, 你画我猜 animals,
a few 海龟汤 objects), and near misses that must be rejected. It was written before the
judge was tuned for diminutives, adjectives, measure words and homophones, and the judge
is never tuned on it: new rules are developed on tests/data/judge_cases.tsv.

Labels come from the meaning of the line, never from what the judge says. Lines whose
meaning is unclear (小熊猫 is also the red panda; 金鱼 for 鱼) are left out rather
than labelled either way.

    python tests/data/make_judge_heldout.py > tests/data/judge_heldout.tsv
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from agentcade.games.draw_guess.drawings import ANIMALS  # noqa: E402

RIDDLES = yaml.safe_load((ROOT / "games/riddle/riddles.yaml").read_text(encoding="utf-8"))[
    "riddles"
]

# answer -> aliases, as the games pass them (draw_guess first, riddle answers added).
ANSWERS: dict[str, tuple[str, ...]] = {}
SOURCE: dict[str, str] = {}
for a in ANIMALS:
    ANSWERS[a.answer] = tuple(a.aliases)
    SOURCE[a.answer] = "draw_guess"
for r in RIDDLES:
    if r["answer"] not in ANSWERS:
        ANSWERS[r["answer"]] = tuple(r.get("aliases") or ())
        SOURCE[r["answer"]] = "riddle"
# Objects of 海龟汤 puzzles (a child naming the thing in the story), judged like answers.
for word in ("冰淇淋", "棉袄", "雨伞"):
    ANSWERS.setdefault(word, ())
    SOURCE.setdefault(word, "turtle_soup")

# The measure word a child uses with each thing (一只猫, 一把雨伞, 一头大象 ...).
MEASURE = {
    "狗": "条",
    "蛇": "条",
    "鱼": "条",
    "鲸鱼": "条",
    "大象": "头",
    "牛": "头",
    "猪": "头",
    "河马": "头",
    "犀牛": "头",
    "马": "匹",
    "雨伞": "把",
    "扇子": "把",
    "筷子": "双",
    "鞋": "双",
    "桌子": "张",
    "书": "本",
    "灯": "盏",
    "镜子": "面",
    "钟": "个",
    "云": "朵",
    "星星": "颗",
    "牙齿": "颗",
    "花生": "颗",
    "香蕉": "根",
    "胡萝卜": "根",
    "辣椒": "个",
    "西瓜": "个",
    "西红柿": "个",
    "大蒜": "头",
    "瓜子": "颗",
    "牙刷": "把",
    "手": "只",
    "眼睛": "只",
    "耳朵": "只",
    "鼻子": "个",
    "月亮": "个",
    "太阳": "个",
    "彩虹": "道",
    "不倒翁": "个",
    "冰淇淋": "个",
    "棉袄": "件",
    "雪": "场",
    "雨": "场",
    "风": "阵",
}
NOT_A_THING = {"空气", "影子", "雪", "雨", "风"}  # no 小X / 大X / colour for these
# Adjectives that fit only some things.
COLOUR = {
    "猫": "黑色的",
    "狗": "黄色的",
    "兔子": "白色的",
    "熊猫": "黑白的",
    "大象": "灰色的",
    "青蛙": "绿色的",
    "乌龟": "绿色的",
    "瓢虫": "红色的",
    "雨伞": "红色的",
    "香蕉": "黄色的",
    "西瓜": "绿色的",
    "辣椒": "红红的",
    "胡萝卜": "红色的",
    "西红柿": "红红的",
    "鹅": "白色的",
    "蝴蝶": "漂亮的",
    "孔雀": "漂亮的",
    "企鹅": "胖胖的",
    "猪": "胖胖的",
    "海豚": "蓝色的",
    "鲸鱼": "蓝色的",
    "章鱼": "紫色的",
    "蜜蜂": "黄色的",
    "蜘蛛": "黑色的",
    "海星": "黄色的",
    "狐狸": "红色的",
    "老鼠": "灰色的",
    "松鼠": "可爱的",
    "刺猬": "可爱的",
    "鸭子": "黄色的",
    "鸡": "花花的",
    "公鸡": "漂亮的",
    "月亮": "圆圆的",
    "太阳": "红红的",
    "星星": "亮亮的",
    "桌子": "圆圆的",
    "书": "厚厚的",
    "鞋": "红色的",
    "灯": "亮亮的",
    "镜子": "圆圆的",
    "冰淇淋": "甜甜的",
    "棉袄": "厚厚的",
    "云": "白白的",
    "彩虹": "漂亮的",
    "钟": "圆圆的",
    "牙刷": "蓝色的",
    "筷子": "长长的",
    "扇子": "大大的",
    "马": "白色的",
    "羊": "白色的",
    "牛": "黑白的",
    "蛇": "长长的",
    "长颈鹿": "高高的",
    "骆驼": "黄色的",
    "袋鼠": "可爱的",
}

# Exact homophones written with other characters (same syllables, same tones), as a
# recogniser writes a word it does not expect.
HOMOPHONE = {
    "熊猫": ["雄猫"],
    "兔子": ["吐子"],
    "狮子": ["师子", "虱子"],
    "猴子": ["侯子"],
    "鸭子": ["压子"],
    "企鹅": ["起额"],
    "鹅": ["额", "俄"],
    "松鼠": ["松属"],
    "老鼠": ["老署"],
    "蜘蛛": ["知猪", "之珠"],
    "乌龟": ["屋归"],
    "蜗牛": ["窝牛"],
    "斑马": ["班马", "搬马"],
    "海豚": ["海屯"],
    "孔雀": ["恐却"],
    "大象": ["大像"],
    "骆驼": ["落驼"],
    "刺猬": ["次位"],
    "蝴蝶": ["胡蝶"],
    "长颈鹿": ["长颈路", "长颈录"],
    "袋鼠": ["带鼠", "代数"],
    "螃蟹": ["旁谢"],
    "章鱼": ["张鱼", "樟鱼"],
    "鳄鱼": ["饿鱼"],
    "河马": ["合马", "和马"],
    "犀牛": ["西牛", "稀牛"],
    "狐狸": ["胡篱"],
    "鹦鹉": ["英武", "婴舞"],
    "蜜蜂": ["蜜峰", "密封"],
    "瓢虫": ["瓢重"],
    "海星": ["海腥"],
    "青蛙": ["清蛙", "青娃"],
    "雪": ["鳕"],
    "雨": ["语", "羽"],
    "云": ["匀"],
    "风": ["疯", "峰"],
    "月亮": ["月量"],
    "太阳": ["太洋", "泰阳"],
    "彩虹": ["采虹"],
    "星星": ["猩猩"],
    "影子": ["颖子"],
    "手": ["首", "守"],
    "眼睛": ["眼晶"],
    "耳朵": ["尔朵"],
    "鱼": ["余", "于"],
    "蛇": ["舌"],
    "鸡": ["机", "积"],
    "猪": ["珠", "朱"],
    "羊": ["阳", "洋"],
    "马": ["码", "玛"],
    "虾": ["瞎"],
    "书": ["叔", "输"],
    "灯": ["登", "蹬"],
    "钟": ["中", "忠"],
    "鞋": ["斜", "邪"],
    "雨伞": ["语伞", "雨散"],
    "扇子": ["善子"],
    "筷子": ["快子", "块子"],
    "镜子": ["静子"],
    "西瓜": ["吸瓜", "西刮"],
    "香蕉": ["相交", "香焦"],
    "辣椒": ["蜡椒", "辣焦"],
    "大蒜": ["大算"],
    "花生": ["花声"],
    "西红柿": ["西红市", "西洪柿"],
    "胡萝卜": ["胡罗卜", "湖萝卜"],
    "牙刷": ["芽刷"],
    "不倒翁": ["不捣翁"],
    "公鸡": ["攻击", "公机"],
    "冰淇淋": ["冰琪淋"],
    "空气": ["空器"],
    "狗": ["苟"],
    "老虎": ["老琥"],
    "猫头鹰": ["猫头英"],
}
# Other words for the same thing (not homophones, still right).
VARIANT = {"冰淇淋": ["冰激凌"], "西红柿": ["洋柿子"]}

# Different things that share characters or sounds with the answer: must be rejected.
NEAR = {
    "猫": ["熊猫", "猫头鹰", "小猫头鹰", "毛", "帽子"],
    "狗": ["狗熊", "热狗", "够"],
    "老虎": ["老鼠", "壁虎", "老虎机"],
    "狮子": ["狮子狗", "师傅"],
    "大象": ["大熊", "大鹅"],
    "长颈鹿": ["梅花鹿", "长颈", "小鹿"],
    "熊猫": ["熊", "猫", "小熊", "狗熊"],
    "猴子": ["猴子面包树", "猴头", "猩猩", "孩子"],
    "兔子": ["肚子", "秃鹫", "兔子灯"],
    "斑马": ["马", "班长", "斑点狗"],
    "企鹅": ["鹅", "企业", "天鹅"],
    "海豚": ["海豹", "海狮", "河豚"],
    "鲸鱼": ["鲨鱼", "鲸鱼的尾巴"],
    "蝴蝶": ["蝴蝶结", "蜻蜓", "碟子"],
    "乌龟": ["乌鸦", "海龟", "乌云"],
    "蜗牛": ["牛", "蜗居", "犀牛"],
    "孔雀": ["麻雀", "孔子"],
    "袋鼠": ["老鼠", "袋子"],
    "骆驼": ["骆驼祥子", "陀螺", "鸵鸟"],
    "刺猬": ["刺", "豪猪"],
    "松鼠": ["老鼠", "松果"],
    "蛇": ["蛇皮袋", "舌头"],
    "鸭子": ["鸭舌帽", "鸭梨", "鸽子"],
    "鸡": ["火鸡", "鸡蛋", "飞机"],
    "猪": ["蜘蛛", "猪八戒", "竹子"],
    "牛": ["蜗牛", "犀牛", "牛奶", "扭"],
    "羊": ["羊驼", "养", "杨树"],
    "马": ["斑马", "河马", "海马", "妈", "马桶"],
    "老鼠": ["老虎", "袋鼠", "松鼠"],
    "青蛙": ["蛤蟆", "青菜"],
    "螃蟹": ["螃蟹壳", "龙虾", "鞋"],
    "章鱼": ["鱿鱼", "鲸鱼", "蟑螂"],
    "鳄鱼": ["鲨鱼", "鳄鱼皮", "蜥蜴"],
    "河马": ["马", "海马", "河"],
    "犀牛": ["牛", "蜗牛", "稀饭"],
    "狐狸": ["狐狸尾巴", "狸猫", "葫芦", "狼"],
    "鹦鹉": ["老鹰", "乌鸦"],
    "猫头鹰": ["猫", "老鹰", "猫头"],
    "蜜蜂": ["蜂蜜", "蜜"],
    "鱼": ["鲸鱼", "章鱼", "鳄鱼", "鱿鱼", "玉"],
    "蜘蛛": ["猪", "蜘蛛网", "知了"],
    "瓢虫": ["虫子", "飘"],
    "海星": ["海马", "星星", "海象"],
    "雪": ["雪人", "雪糕"],
    "雨": ["雨衣", "雨伞"],
    "月亮": ["亮", "月饼", "星星"],
    "太阳": ["太阳花", "太太", "月亮"],
    "空气": ["空调", "气球"],
    "风": ["风筝", "风车"],
    "云": ["运动", "晕"],
    "彩虹": ["彩色", "红色"],
    "星星": ["流星雨", "星期"],
    "影子": ["镜子", "椅子"],
    "手": ["手套", "手机", "脚"],
    "眼睛": ["眼镜蛇", "眉毛", "眼泪"],
    "耳朵": ["耳环", "木耳"],
    "鼻子": ["鼻涕", "笔"],
    "牙齿": ["牙膏", "尺子"],
    "鹅": ["企鹅", "天鹅", "饿"],
    "燕子": ["燕麦", "鸽子"],
    "虾": ["龙虾", "瞎子"],
    "公鸡": ["母鸡", "火鸡", "公交车"],
    "蚂蚁": ["蚂蚱", "蚯蚓"],
    "花生": ["花", "生日"],
    "大蒜": ["洋葱", "大葱"],
    "辣椒": ["辣条", "胡椒"],
    "西瓜": ["黄瓜", "冬瓜", "西边"],
    "胡萝卜": ["白萝卜", "胡子", "萝卜干", "葫芦"],
    "西红柿": ["柿子", "红色"],
    "香蕉": ["香肠", "胶水"],
    "瓜子": ["瓜", "袜子"],
    "扇子": ["山", "伞"],
    "桌子": ["椅子", "凳子"],
    "雨伞": ["雨", "雨衣"],
    "牙刷": ["牙膏", "刷子"],
    "不倒翁": ["不倒", "老翁"],
    "钟": ["中午", "手表"],
    "筷子": ["勺子", "叉子"],
    "鞋": ["袜子", "鞋带"],
    "书": ["树", "书包"],
    "镜子": ["橘子", "眼镜"],
    "灯": ["灯笼", "等一等"],
    "冰淇淋": ["冰棍", "冰块"],
    "棉袄": ["棉花", "毛衣"],
}

# Lines left out: unclear meaning (小熊猫 is also the red panda) or a rude homophone.
LEFT_OUT = {("熊猫", "小熊猫"), ("鸡", "鸡吧")}

ANSWER_FRAMES = [
    "是{x}吗",
    "我猜{x}",
    "应该是{x}吧",
    "我觉得是{x}",
    "{x}吧",
    "{x}呀",
    "{x}！",
    "嗯，{x}",
    "是不是{x}呀",
    "我知道了，是{x}",
    "那是{x}",
    "答案是{x}",
    "{x}对不对",
    "我猜是{x}吧",
    "{x}啦",
    "是{x}呀",
    "好像是{x}",
    "这是{x}",
]
NEGATION_FRAMES = ["不是{x}", "{x}不对", "肯定不是{x}", "没有{x}", "我不觉得是{x}"]
QUESTION_FRAMES = [
    "{x}会飞吗",
    "{x}是什么颜色的",
    "它比{x}大吗",
    "{x}住在哪里",
    "{x}能吃吗",
    "{x}有几条腿",
]


def rows() -> list[tuple[str, str, str, str, str]]:
    rng = random.Random(13)
    out: list[tuple[str, str, str, str, str]] = []

    def add(verdict: str, rule: str, answer: str, utterance: str) -> None:
        out.append((verdict, rule, answer, "|".join(ANSWERS[answer]), utterance))

    for answer in ANSWERS:
        thing = answer not in NOT_A_THING
        # True variants: diminutive, adjective, measure word, homophone, frames, particles.
        if thing:
            add("accept", "diminutive", answer, "小" + answer)
            if SOURCE[answer] == "draw_guess" and rng.random() < 0.5:
                add(
                    "accept",
                    "diminutive",
                    answer,
                    rng.choice(["{x}宝宝", "小{x}宝宝"]).format(x=answer),
                )
            add(
                "accept",
                "adjective",
                answer,
                rng.choice(["大", "大大的", "小小的", "一个小"]) + answer
                if answer not in MEASURE
                else "一" + MEASURE[answer] + rng.choice(["大", "小"]) + answer,
            )
            if answer in COLOUR:
                add("accept", "adjective", answer, COLOUR[answer] + answer)
        measure = MEASURE.get(answer, "只" if SOURCE[answer] == "draw_guess" else "个")
        if answer not in ("雪", "雨", "风", "空气"):
            add(
                "accept",
                "measure",
                answer,
                rng.choice(["一", "我猜是一", "是一"]) + measure + answer,
            )
        for homo in HOMOPHONE.get(answer, []):
            add(
                "accept",
                "homophone",
                answer,
                rng.choice(["{x}", "是{x}吗", "我猜{x}", "{x}吧"]).format(x=homo),
            )
        for variant in VARIANT.get(answer, []):
            add("accept", "variant", answer, variant)
        for frame in rng.sample(ANSWER_FRAMES, 2):
            add("accept", "frame", answer, frame.format(x=answer))
        if thing and rng.random() < 0.6:
            add(
                "accept",
                "combined",
                answer,
                rng.choice(
                    ["我猜是一{m}小{x}吧", "是不是一{m}{x}呀", "应该是小{x}吧", "嗯，是小{x}吗"]
                ).format(m=measure, x=answer),
            )
        # Near misses: other things, negations, questions, lists.
        for other in NEAR.get(answer, []):
            if other in (answer, *ANSWERS[answer]):
                continue
            add("reject", "other-thing", answer, other)
            if rng.random() < 0.35:
                add(
                    "reject",
                    "other-thing",
                    answer,
                    rng.choice(["是{x}吗", "小{x}", "一只{x}", "我猜{x}"]).format(x=other),
                )
        add("reject", "negation", answer, rng.choice(NEGATION_FRAMES).format(x=answer))
        if thing and rng.random() < 0.5:
            add("reject", "question", answer, rng.choice(QUESTION_FRAMES).format(x=answer))
        others = [
            a
            for a in ANSWERS
            if a != answer and a not in answer and answer not in a and not set(a) & set(answer)
        ]
        if rng.random() < 0.4:
            add("reject", "list", answer, f"{answer}还是{rng.choice(others)}")
        if rng.random() < 0.6:
            wrong = rng.choice(others)
            if not set(wrong) & set("".join(ANSWERS[answer])):
                add(
                    "reject",
                    "wrong-answer",
                    answer,
                    rng.choice(["小{x}", "一只{x}", "是{x}吗", "大{x}", "{x}宝宝"]).format(x=wrong),
                )
    return out


def main() -> None:
    print("# Held-back judge set: generated once by make_judge_heldout.py; never tuned on.")
    print("# verdict\trule\tanswer\taliases (|-separated)\tutterance")
    seen = set()
    for row in rows():
        key = (row[2], row[4])
        if key in seen or key in LEFT_OUT:
            continue
        seen.add(key)
        print("\t".join(row))


if __name__ == "__main__":
    main()
