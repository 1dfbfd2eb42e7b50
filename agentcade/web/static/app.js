// agentcade local pages: a little script, no build step. Every value from the server is
// put in the page with textContent (never as HTML).
"use strict";

const TOKEN = document.querySelector('meta[name="agentcade-token"]').content;

async function post(path, body) {
  let response;
  try {
    response = await fetch(path, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-Agentcade-Token": TOKEN },
      body: JSON.stringify(body),
    });
  } catch (err) {
    return { status: 0, data: { errors: { "": "连不上 agentcade，它还在运行吗？" } } };
  }
  let data = {};
  try { data = await response.json(); } catch (err) { data = { errors: { "": "回答看不懂" } }; }
  if (data.error && !data.errors) {
    // The HTTP loop's own refusal ({"error": ...}): too large, too slow, malformed.
    const what = response.status === 413 ? "内容太大了" : "没被接受（" + data.error + "）";
    data = { errors: { "": what } };
  }
  return { status: response.status, data };
}

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined && text !== null) node.textContent = text;
  return node;
}

function setStatus(node, text, ok) {
  if (!node) return;
  node.textContent = text || "";
  node.classList.toggle("ok", ok === true);
  node.classList.toggle("bad", ok === false);
}

function showErrors(form, errors) {
  form.querySelectorAll(".field").forEach((field) => {
    const message = errors[field.dataset.key] || "";
    field.classList.toggle("invalid", !!message);
    const slot = field.querySelector(".error");
    if (slot) slot.textContent = message;
  });
  const whole = form.querySelector(".form-error");
  if (whole) whole.textContent = errors[""] || "";
  const first = form.querySelector(".field.invalid input, .field.invalid select");
  if (first) first.focus();
}

// ------------------------------------------------------------------ settings

function formValues(form) {
  const values = {};
  form.querySelectorAll("input[data-kind], select[data-kind]").forEach((input) => {
    values[input.name] = input.value;
  });
  const clear = [...form.querySelectorAll('input[name="__clear"]:checked')].map((c) => c.value);
  return { values, clear };
}

function setupSettings() {
  document.querySelectorAll("form.settings").forEach((form) => {
    const status = form.querySelector(".status");
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const button = form.querySelector('button[type="submit"]');
      button.disabled = true;
      setStatus(status, "正在保存…");
      const { values, clear } = formValues(form);
      const { status: code, data } = await post("/api/settings", { section: form.dataset.section, values, clear });
      button.disabled = false;
      if (code === 200) {
        showErrors(form, {});
        setStatus(status, data.message, true);
        form.querySelectorAll('input[type="password"]').forEach((input) => {
          if (input.value) input.placeholder = "已设置（留空就不改）";
          input.value = "";
        });
        if ((data.started || []).length || clear.length) setTimeout(() => location.reload(), 1200);
      } else {
        showErrors(form, data.errors || {});
        setStatus(status, "没有保存：请按红字改好再保存。", false);
      }
    });
    const test = form.querySelector('[data-action="test"]');
    if (test) {
      test.addEventListener("click", async () => {
        test.disabled = true;
        setStatus(status, "正在问大模型一句话…");
        const { values } = formValues(form);
        const { status: http, data } = await post("/api/test-model", { values });
        test.disabled = false;
        if (http !== 200) {
          showErrors(form, data.errors || {});
          setStatus(status, "没有测试：请按红字改好。", false);
          return;
        }
        showErrors(form, {});
        setStatus(status, data.message, data.ok);
      });
    }
  });
}

// ------------------------------------------------------------------ games

function capList(words) {
  const wrap = el("div", "caps", "会用到：");
  const list = el("ul");
  (words.length ? words : ["不需要控制机器人"]).forEach((w) => list.appendChild(el("li", null, w)));
  wrap.appendChild(list);
  return wrap;
}

function showPreview(card) {
  const box = document.getElementById("preview");
  box.replaceChildren();
  box.hidden = false;
  const head = el("div", "game-head");
  head.appendChild(el("strong", null, card.name));
  head.appendChild(el("span", "version", "版本 " + card.version));
  box.appendChild(head);
  if (card.summary) box.appendChild(el("p", null, card.summary));
  const meta = el("div", "meta");
  meta.appendChild(el("span", null, card.author ? "作者：" + card.author + " " : "作者：没有写 "));
  if (card.homepage && /^https?:\/\//.test(card.homepage)) {
    const link = el("a", null, "主页");
    link.href = card.homepage; link.target = "_blank"; link.rel = "noopener noreferrer";
    meta.appendChild(link);
  }
  box.appendChild(meta);
  box.appendChild(capList(card.capability_words));
  if (card.warnings.length) {
    const list = el("ul", "warnings");
    card.warnings.forEach((w) => list.appendChild(el("li", null, w)));
    box.appendChild(list);
  }
  const actions = el("div", "actions");
  const status = el("p", "status");
  if (card.installed) {
    actions.appendChild(el("p", "status ok", "已经安装了。"));
  } else {
    const confirm = el("button", null, "确认安装");
    confirm.type = "button";
    confirm.dataset.action = "confirm-install";
    confirm.addEventListener("click", async () => {
      confirm.disabled = true;
      setStatus(status, "正在安装…");
      const { status: code, data } = await post("/api/games/install", { url: card.url });
      if (code === 200) {
        setStatus(status, data.message, true);
        setTimeout(() => location.reload(), 1500);
      } else {
        confirm.disabled = false;
        setStatus(status, (data.errors && (data.errors.url || data.errors[""])) || "没能安装", false);
      }
    });
    const cancel = el("button", "secondary", "取消");
    cancel.type = "button";
    cancel.addEventListener("click", () => { box.hidden = true; });
    actions.appendChild(confirm);
    actions.appendChild(cancel);
  }
  box.appendChild(actions);
  box.appendChild(status);
  box.scrollIntoView({ behavior: "smooth", block: "nearest" });
}

async function preview(url, form) {
  const { status, data } = await post("/api/games/preview", { url });
  if (status === 200) {
    if (form) showErrors(form, {});
    showPreview(data);
    return true;
  }
  if (form) showErrors(form, data.errors || {});
  return data.errors || {};
}

async function loadCatalog() {
  const list = document.getElementById("catalog-list");
  let data;
  try {
    data = await (await fetch("/api/catalog")).json();
  } catch (err) {
    list.replaceChildren(el("li", null, "没能读取游戏目录。"));
    return;
  }
  list.replaceChildren();
  (data.errors || []).forEach((e) => list.appendChild(el("li", "error", e)));
  if (!data.games.length) list.appendChild(el("li", null, "游戏目录里还没有游戏。"));
  data.games.forEach((game) => {
    const item = el("li", "game");
    item.dataset.id = game.id;
    const head = el("div", "game-head");
    head.appendChild(el("strong", null, game.name));
    head.appendChild(el("span", "version", "版本 " + game.version));
    if (!game.reviewed) head.appendChild(el("span", "tag req", "当前版本未经审核"));
    item.appendChild(head);
    item.appendChild(el("p", null, game.summary));
    item.appendChild(el("div", "meta", "作者：" + game.author));
    item.appendChild(capList(game.capability_words));
    const status = el("p", "status");
    if (game.installed) {
      item.appendChild(el("p", "status ok", "已安装"));
    } else {
      const button = el("button", null, "看看并安装");
      button.type = "button";
      button.addEventListener("click", async () => {
        button.disabled = true;
        setStatus(status, "正在读取游戏信息…");
        const result = await preview(game.url, null);
        button.disabled = false;
        setStatus(status, result === true ? "" : (result.url || result[""] || "没能读取"), result === true ? undefined : false);
      });
      item.appendChild(button);
    }
    item.appendChild(status);
    list.appendChild(item);
  });
}

function setupInstall() {
  const form = document.getElementById("install-form");
  if (!form) return;
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const button = form.querySelector("button");
    button.disabled = true;
    await preview(form.querySelector("input").value, form);
    button.disabled = false;
  });
}

function setupGames() {
  document.querySelectorAll('[data-action="uninstall"]').forEach((button) => {
    button.addEventListener("click", async () => {
      if (!confirm("卸载“" + button.dataset.name + "”？")) return;
      button.disabled = true;
      const { status, data } = await post("/api/games/uninstall", { url: button.dataset.url });
      if (status === 200) location.reload();
      else { button.disabled = false; alert((data.errors && (data.errors.url || data.errors[""])) || "没能卸载"); }
    });
  });
  document.querySelectorAll('[data-action="confirm"]').forEach((button) => {
    button.addEventListener("click", async () => {
      if (!confirm("确认“" + button.dataset.name + "”现在要用的能力？确认后从下一局起生效。")) return;
      button.disabled = true;
      const { status, data } = await post("/api/games/confirm", { url: button.dataset.url });
      if (status === 200) location.reload();
      else { button.disabled = false; alert((data.errors && (data.errors.url || data.errors[""])) || "没能确认"); }
    });
  });
  loadCatalog();
}

// ------------------------------------------------------------------ live view

const KINDS = {
  user_input: ["听到", "user"],
  main_tool_call: ["主 Agent", "main"],
  game_start: ["开始游戏", "a2a"],
  a2a_request: ["发给游戏", "a2a"],
  game_reply: ["游戏回答", "a2a"],
  spoken: ["说出来", "spoken"],
  directive_executed: ["机器人", "robot"],
  directive_skipped: ["没执行", "error"],
  game_cleared: ["游戏结束", "a2a"],
  tool_call: ["游戏工具", "main"],
  busy: ["游戏在忙", "error"],
  model_error: ["模型出错", "error"],
  game_error: ["游戏出错", "error"],
  hook_error: ["游戏出错", "error"],
  speech_failed: ["没说出来", "error"],
  settings_error: ["设置有误", "error"],
  barge_in: ["被打断", "user"],
  guard: ["没让说", "error"],
};

const OUTCOMES = { ok: "做了", completed: "做完了", started: "开始了", done: "做完了", failed: "没做成", cancelled: "取消了", error: "出错了", timeout: "超时了" };

function describe(rec) {
  switch (rec.type) {
    case "user_input": return rec.text;
    case "main_tool_call": return rec.tool + " " + (typeof rec.arguments === "string" ? rec.arguments : JSON.stringify(rec.arguments || {}));
    case "game_start": return rec.game;
    case "a2a_request": return rec.game + " · " + rec.kind + (rec.text ? "：" + rec.text : "");
    case "game_reply": return (rec.final ? "" : "（还没说完）") + (rec.text || "") +
      ((rec.directives || []).length ? " ＋ " + rec.directives.join("，") : "");
    case "spoken": return rec.text;
    case "directive_executed": return (rec.directive || rec.call || "") + " → " + (OUTCOMES[rec.outcome] || rec.outcome || "") +
      (typeof rec.ms === "number" ? "（" + rec.ms + "ms）" : "") + (rec.reset ? "（复位）" : "");
    case "directive_skipped": return (rec.directive || rec.call || "") + "（" + (rec.reason || "") + "）";
    case "tool_call": return (rec.tool || rec.name || "") + " " + JSON.stringify(rec.arguments || rec.args || {});
    case "barge_in": return (rec.by === "voice" ? "有人说话，小懒停下了" : "摸了后背，小懒停下了") +
      (rec.sentence ? "：“" + rec.sentence + "”说到 " + rec.into_ms + "ms" : "");
    default: {
      const rest = Object.assign({}, rec);
      ["type", "ts", "request_id"].forEach((k) => delete rest[k]);
      return JSON.stringify(rest);
    }
  }
}

const turns = new Map();

function clock(ts) {
  return new Date(ts * 1000).toLocaleTimeString("zh-CN", { hour12: false });
}

function turnNode(id, fresh) {
  let turn = turns.get(id);
  if (turn) return turn;
  const node = el("article", "turn" + (fresh ? " new" : ""));
  node.dataset.request = id;
  const head = el("div", "turn-head");
  const said = el("span", "said", "（这一轮没有听到的话）");
  const when = el("span", "when");
  const took = el("span", "took");
  const toggle = el("button", "toggle", "显示全部记录");
  toggle.type = "button";
  toggle.addEventListener("click", () => {
    node.classList.toggle("open");
    toggle.textContent = node.classList.contains("open") ? "只看要点" : "显示全部记录";
  });
  head.append(said, when, took, toggle);
  const list = el("ol", "records");
  node.append(head, list);
  document.getElementById("turns").prepend(node);
  turn = { node, said, when, took, list, start: null };
  turns.set(id, turn);
  return turn;
}

function addRecord(rec, fresh) {
  if (!rec.request_id) {
    const other = document.getElementById("other");
    const item = el("li");
    item.append(el("span", "at", clock(rec.ts)), el("span", "kind", rec.type), el("span", "what", describe(rec)));
    other.prepend(item);
    return;
  }
  const turn = turnNode(rec.request_id, fresh);
  if (turn.start === null) { turn.start = rec.ts; turn.when.textContent = clock(rec.ts); }
  if (rec.type === "user_input") turn.said.textContent = "“" + rec.text + "”";
  const ms = Math.round((rec.ts - turn.start) * 1000);
  turn.took.textContent = "用时 " + (ms / 1000).toFixed(2) + " 秒";
  const [label, cls] = KINDS[rec.type] || [rec.type, "detail"];
  const item = el("li", cls);
  item.dataset.type = rec.type;
  if (rec.shown) {
    showRobot(turn, item, rec, ms, label);
  } else {
    item.append(el("span", "at", "+" + ms + "ms"), el("span", "kind", label), el("span", "what", describe(rec)));
  }
  turn.list.appendChild(item);
}

// What the robot did, as a person sees it: the screen as a picture (the SVG is made by the
// server from numbers only), the head and lights in words; the raw record one click away.
function showRobot(turn, item, rec, ms, label) {
  const shown = rec.shown;
  const words = el("span", "what words", shown.words);
  item.classList.add("shown");
  item.append(el("span", "at", "+" + ms + "ms"), el("span", "kind", label), words);
  if (shown.svg) {
    const figure = el("figure", "screen");
    figure.innerHTML = shown.svg;
    item.append(figure);
  }
  item.append(el("span", "raw", describe(rec)));
  if (!shown.svg && turn.lastWords === shown.words) item.classList.add("again");  // 摇头 once
  turn.lastWords = shown.svg ? null : shown.words;
  if (shown.strokes === null || shown.strokes === undefined) return;
  if (!shown.step) turn.drawing = [];
  turn.drawing = turn.drawing || [];
  turn.drawing.push({ words, strokes: shown.strokes, item });
  if (turn.drawing.length > 1) {
    const total = shown.strokes;
    turn.drawing.forEach((step, i) => {
      step.words.textContent = "画第 " + step.strokes + " 笔，共 " + total + " 笔";
      step.item.classList.toggle("earlier", i < turn.drawing.length - 1);
    });
  }
}

async function setupLive() {
  const status = document.getElementById("live-status");
  const load = async () => {
    const data = await (await fetch("/api/live")).json();
    turns.clear();
    document.getElementById("turns").replaceChildren();
    document.getElementById("other").replaceChildren();
    data.turns.forEach((t) => t.records.forEach((r) => addRecord(r, false)));
    data.other.forEach((r) => addRecord(r, false));
    if (!data.turns.length) {
      document.getElementById("turns").appendChild(el("p", "card note empty", "还没有对话。对小懒说句话（或者在 agentcade play 里打一句），这里就会出现。"));
    }
  };
  const connect = async () => {
    try { await load(); } catch (err) { /* shown below */ }
    const socket = new WebSocket("ws://" + location.host + "/live");
    socket.onopen = () => setStatus(status, "已连接，新的一轮会自动出现。", true);
    socket.onmessage = (event) => {
      const empty = document.querySelector("#turns .empty");
      if (empty) empty.remove();
      addRecord(JSON.parse(event.data), true);
    };
    socket.onclose = () => {
      setStatus(status, "连接断了，正在重连…", false);
      setTimeout(connect, 2000);
    };
  };
  connect();
}

const page = document.body.dataset.page;
if (page === "/settings") setupSettings();
if (page === "/games") setupGames();
setupInstall();
if (page === "/") setupLive();
