"""``@tool``: schemas from type hints, load-time errors, validated invocation."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Literal, cast

import pytest
import trio
from pydantic import Field

from agentcade.core.errors import GameCodeError
from agentcade.core.tools import BUILTIN_TOOL_NAMES, Tool, ToolDefinitionError, collect_tools, tool

if TYPE_CHECKING:  # only for annotations: tools must not need these at run time
    from trio.testing import MockClock

    from agentcade.game.turn import Turn


class FakeTurn:
    text = "水"


TURN = cast("Turn", FakeTurn())  # the tools read only turn.text


class Game:
    """A game class with one tool of each supported shape."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, object]] = []
        self.hints = ["有四个字", "是液体"]

    @tool("取得下一条提示。")
    def get_hint(self) -> dict[str, object]:
        self.calls.append(("get_hint", None))
        return {"hint": self.hints.pop(0)}

    @tool("用户放弃时公布答案。", name="give_up")
    def reveal(self, turn: Turn) -> dict[str, object]:
        self.calls.append(("give_up", turn))
        return {"answer": "水"}

    @tool("用户猜一个数。")
    def guess(self, number: Annotated[int, Field(ge=1, le=20, description="用户猜的数")]) -> None:
        self.calls.append(("guess", number))

    @tool("出一道新题，用户没说难度时用 easy。")
    async def new_question(self, turn: Turn, level: Literal["easy", "hard"] = "easy") -> str:
        self.calls.append(("new_question", (turn, level)))
        return f"{level} question"


# --- schemas ---------------------------------------------------------------------------------


def test_tool_without_model_parameters_has_empty_object_schema() -> None:
    assert Game.get_hint.parameters == {
        "type": "object",
        "properties": {},
        "required": [],
        "additionalProperties": False,
    }


def test_annotated_field_gives_range_and_description() -> None:
    assert Game.guess.parameters["properties"] == {
        "number": {"type": "integer", "minimum": 1, "maximum": 20, "description": "用户猜的数"}
    }
    assert Game.guess.parameters["required"] == ["number"]


def test_literal_gives_enum_and_default_makes_it_optional() -> None:
    assert Game.new_question.parameters["properties"] == {
        "level": {"type": "string", "enum": ["easy", "hard"], "default": "easy"}
    }
    assert Game.new_question.parameters["required"] == []


@pytest.mark.parametrize(
    ("hint", "expected"),
    [
        (str, {"type": "string"}),
        (int, {"type": "integer"}),
        (float, {"type": "number"}),
        (bool, {"type": "boolean"}),
        (list[str], {"type": "array", "items": {"type": "string"}}),
        (list[int], {"type": "array", "items": {"type": "integer"}}),
        (str | None, {"anyOf": [{"type": "string"}, {"type": "null"}]}),
        (Literal[1, 2, 3], {"type": "integer", "enum": [1, 2, 3]}),
        (
            Annotated[str, Field(min_length=1, max_length=8, description="名字")],
            {"type": "string", "minLength": 1, "maxLength": 8, "description": "名字"},
        ),
        (
            Annotated[float, Field(gt=0, lt=1)],
            {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
        ),
        (
            Annotated[int, Field(ge=0)] | None,
            {"anyOf": [{"type": "integer", "minimum": 0}, {"type": "null"}]},
        ),
        (
            Annotated[list[str], Field(min_length=1, description="词")],
            {"type": "array", "items": {"type": "string"}, "minItems": 1, "description": "词"},
        ),
    ],
)
def test_schema_of_each_supported_hint(hint: object, expected: dict[str, object]) -> None:
    def fn(self, value):
        return None

    fn.__annotations__ = {"value": hint}
    assert tool("说明")(fn).parameters["properties"] == {"value": expected}


def test_string_annotations_resolve_in_the_function_module() -> None:
    # This module uses `from __future__ import annotations`, like games do.
    assert isinstance(Game.guess.fn.__annotations__["number"], str)
    assert Game.guess.parameters["properties"]["number"]["type"] == "integer"


def test_required_lists_parameters_without_defaults_in_order() -> None:
    class G:
        @tool("说明")
        def f(self, b: str, a: int, c: bool = False, *, d: float, e: str | None = None) -> None:
            pass

    assert G.f.parameters["required"] == ["b", "a", "d"]
    assert list(G.f.parameters["properties"]) == ["b", "a", "c", "d", "e"]
    assert G.f.parameters["properties"]["e"]["default"] is None


def test_parameter_named_like_a_pydantic_attribute_is_fine() -> None:
    class G:
        @tool("说明")
        def f(self, json: str, schema: int, title: str = "x") -> dict[str, object]:
            return {"json": json, "schema": schema, "title": title}

    assert list(G.f.parameters["properties"]) == ["json", "schema", "title"]
    assert G.f.parameters["properties"]["title"] == {"type": "string", "default": "x"}


def test_turn_is_hidden_from_the_schema() -> None:
    assert Game.reveal.wants_turn
    assert Game.reveal.parameters["properties"] == {}
    assert "turn" not in Game.new_question.parameters["properties"]
    assert not Game.guess.wants_turn


def test_turn_may_come_after_other_parameters() -> None:
    class G:
        @tool("说明")
        def f(self, word: str, turn: Turn) -> None:
            pass

    assert G.f.wants_turn
    assert list(G.f.parameters["properties"]) == ["word"]


def test_openai_schema_shape() -> None:
    assert Game.guess.openai_schema() == {
        "type": "function",
        "function": {
            "name": "guess",
            "description": "用户猜一个数。",
            "parameters": Game.guess.parameters,
        },
    }


def test_openai_schema_is_a_copy() -> None:
    Game.guess.openai_schema()["function"]["parameters"]["properties"].clear()
    assert "number" in Game.guess.parameters["properties"]


def test_is_async_reflects_the_method() -> None:
    assert Game.new_question.is_async
    assert not Game.get_hint.is_async


def test_name_defaults_to_method_name() -> None:
    assert Game.get_hint.name == "get_hint"


def test_name_override() -> None:
    assert Game.reveal.name == "give_up"
    assert "give_up" in collect_tools(Game)


# --- descriptor ------------------------------------------------------------------------------


def test_class_attribute_is_the_tool() -> None:
    assert isinstance(Game.get_hint, Tool)


def test_instance_attribute_is_the_bound_method() -> None:
    game = Game()
    assert game.get_hint() == {"hint": "有四个字"}
    assert game.reveal(TURN) == {"answer": "水"}
    assert game.calls == [("get_hint", None), ("give_up", TURN)]


async def test_bound_async_method_can_be_awaited_directly() -> None:
    game = Game()
    assert await game.new_question(TURN, "hard") == "hard question"


# --- collect_tools ---------------------------------------------------------------------------


def test_collect_tools_in_definition_order() -> None:
    assert list(collect_tools(Game)) == ["get_hint", "give_up", "guess", "new_question"]


def test_collect_tools_includes_bases_and_subclass_override_replaces() -> None:
    class Child(Game):
        @tool("新的提示。")
        def get_hint(self) -> dict[str, object]:
            return {"hint": "new"}

        @tool("说明")
        def extra(self) -> None:
            pass

    tools = collect_tools(Child)
    assert list(tools) == ["get_hint", "give_up", "guess", "new_question", "extra"]
    assert tools["get_hint"].description == "新的提示。"


def test_plain_method_override_removes_the_base_tool() -> None:
    class Child(Game):
        def get_hint(self) -> dict[str, object]:
            return {}

    assert "get_hint" not in collect_tools(Child)


def test_collect_tools_of_class_without_tools_is_empty() -> None:
    assert collect_tools(object) == {}


# --- load-time errors ------------------------------------------------------------------------


@pytest.mark.parametrize("bad", ["get hint", "提示", "a.b", "", "x" * 65])
def test_bad_tool_name(bad: str) -> None:
    with pytest.raises(ToolDefinitionError, match=r"G\.f: tool name .* letters, digits"):

        class G:
            @tool("说明", name=bad)
            def f(self) -> None:
                pass


def test_bad_method_name_needs_name_override() -> None:
    with pytest.raises(ToolDefinitionError, match=r"name=") as info:

        class G:
            @tool("说明")
            def 提示(self) -> None:
                pass

    assert "G.提示" in str(info.value)


def test_missing_annotation_names_the_parameter() -> None:
    with pytest.raises(ToolDefinitionError, match=r"G\.f: parameter 'word' has no type annotation"):

        class G:
            @tool("说明")
            def f(self, word) -> None:
                pass


def test_turn_needs_no_annotation() -> None:
    class G:
        @tool("说明")
        def f(self, turn) -> None:
            pass

    assert G.f.wants_turn


@pytest.mark.parametrize("signature", ["self, *words: str", "self, **options: str"])
def test_star_parameters_are_rejected(signature: str) -> None:
    namespace: dict[str, object] = {}
    exec(f"def f({signature}):\n    pass", namespace)
    with pytest.raises(ToolDefinitionError, match=r"f: `\*{1,2}\w+` is not allowed"):
        tool("说明")(cast("Callable[..., object]", namespace["f"]))


def test_first_parameter_must_be_self() -> None:
    with pytest.raises(ToolDefinitionError, match=r"first parameter must be `self`"):

        @tool("说明")
        def f(turn: object) -> None:
            pass


@pytest.mark.parametrize(
    "hint", ["dict[str, int]", "int | str", "list[list[int]]", "list", "object"]
)
def test_unsupported_hint_is_rejected(hint: str) -> None:
    namespace: dict[str, object] = {}
    exec(f"def f(self, value: {hint}):\n    pass", namespace)
    with pytest.raises(ToolDefinitionError, match=r"parameter 'value' has an unsupported type"):
        tool("说明")(cast("Callable[..., object]", namespace["f"]))


def test_unresolvable_annotation_is_reported() -> None:
    with pytest.raises(
        ToolDefinitionError, match=r"type of parameter 'level' .* cannot be resolved"
    ):

        class G:
            @tool("说明")
            def f(self, level: NoSuchType) -> None:  # type: ignore[name-defined]  # noqa: F821
                pass


def test_bare_decorator_says_how_to_write_it() -> None:
    with pytest.raises(
        ToolDefinitionError, match=r'@tool needs a description: write @tool\("说明"\)'
    ):

        class G:
            @tool  # type: ignore[arg-type]
            def f(self) -> None:
                pass


@pytest.mark.parametrize("description", ["", "   "])
def test_empty_description_is_rejected(description: str) -> None:
    with pytest.raises(
        ToolDefinitionError, match=r"G\.f: the @tool description must be a non-empty"
    ):

        class G:
            @tool(description)
            def f(self) -> None:
                pass


def test_decorating_a_staticmethod_is_rejected() -> None:
    with pytest.raises(ToolDefinitionError, match=r"put @tool above any other decorator"):

        class G:
            @tool("说明")  # type: ignore[arg-type]  # what this test shows is refused
            @staticmethod
            def f() -> None:
                pass


def test_duplicate_tool_names_in_one_class() -> None:
    class G:
        @tool("说明")
        def give_up(self) -> None:
            pass

        @tool("说明", name="give_up")
        def reveal(self) -> None:
            pass

    with pytest.raises(
        ToolDefinitionError,
        match=r"G: methods 'give_up' and 'reveal' both declare the tool 'give_up'",
    ):
        collect_tools(G)


def test_duplicate_with_builtin_say() -> None:
    class G:
        @tool("说明", name="say")
        def speak(self) -> None:
            pass

    assert "say" in BUILTIN_TOOL_NAMES
    with pytest.raises(ToolDefinitionError, match=r"G\.speak: the tool name 'say' is built in"):
        collect_tools(G)


def test_tool_definition_error_is_a_type_error() -> None:
    assert issubclass(ToolDefinitionError, TypeError)


# --- invoke: validation ----------------------------------------------------------------------


async def test_invoke_passes_validated_arguments() -> None:
    game = Game()
    assert await Game.guess.invoke(game, TURN, '{"number": 7}') == {"ok": True}
    assert game.calls == [("guess", 7)]


async def test_invoke_accepts_a_parsed_dict() -> None:
    game = Game()
    await Game.guess.invoke(game, TURN, {"number": 3})
    assert game.calls == [("guess", 3)]


@pytest.mark.parametrize("empty", [None, "", "  ", "null", "{}"])
async def test_invoke_without_arguments(empty: str | None) -> None:
    game = Game()
    assert await Game.get_hint.invoke(game, TURN, empty) == {"hint": "有四个字"}


async def test_invoke_fills_defaults() -> None:
    game = Game()
    await Game.new_question.invoke(game, TURN, None)
    assert game.calls == [("new_question", (TURN, "easy"))]


async def test_invoke_coerces_numeric_string_to_int() -> None:
    game = Game()
    await Game.guess.invoke(game, TURN, '{"number": "5"}')
    assert game.calls == [("guess", 5)]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "expected a JSON object, got an array"),
        ('"five"', "expected a JSON object, got a string"),
        ("{}", "number: missing"),
        ('{"number": 21}', "number: Input should be less than or equal to 20, got 21"),
        ('{"number": "abc"}', "number: Input should be a valid integer"),
        ('{"number": 2.5}', "number: Input should be a valid integer"),
        ('{"number": true}', "number: Input should be a number, not true/false, got true"),
        ('{"number": 2, "extra": 1}', "extra: unexpected argument (parameters: number)"),
    ],
)
async def test_invalid_arguments_are_returned_and_method_not_called(
    arguments: str, message: str
) -> None:
    game = Game()
    result = await Game.guess.invoke(game, TURN, arguments)
    assert result["error"].startswith("Invalid arguments for guess: ")
    assert message in result["error"]
    assert game.calls == []


async def test_invalid_literal_is_returned() -> None:
    game = Game()
    result = await Game.new_question.invoke(game, TURN, '{"level": "medium"}')
    assert result == {
        "error": "Invalid arguments for new_question: level: Input should be 'easy' or 'hard', "
        'got "medium"'
    }
    assert game.calls == []


async def test_model_cannot_pass_turn() -> None:
    game = Game()
    result = await Game.reveal.invoke(game, TURN, '{"turn": "fake"}')
    assert "turn: unexpected argument" in result["error"]
    assert game.calls == []


async def test_bool_is_refused_for_int_literal_and_list_items() -> None:
    class G:
        @tool("说明")
        def f(self, pick: Literal[1, 2], xs: list[int]) -> None:
            raise AssertionError("not called")

    result = await G.f.invoke(G(), None, '{"pick": true, "xs": [1, false]}')
    assert "pick: Input should be a number, not true/false" in result["error"]
    assert "xs.1: Input should be a number, not true/false" in result["error"]


async def test_bool_parameter_accepts_json_booleans() -> None:
    class G:
        @tool("说明")
        def f(self, flag: bool) -> dict[str, object]:
            return {"flag": flag}

    assert await G.f.invoke(G(), None, '{"flag": true}') == {"flag": True}


# --- invoke: calling -------------------------------------------------------------------------


async def test_invoke_injects_turn() -> None:
    game = Game()
    assert await Game.reveal.invoke(game, TURN, "{}") == {"answer": "水"}
    assert game.calls == [("give_up", TURN)]


async def test_invoke_awaits_async_tools() -> None:
    game = Game()
    assert await Game.new_question.invoke(game, TURN, '{"level": "hard"}') == {
        "result": "hard question"
    }
    assert game.calls == [("new_question", (TURN, "hard"))]


async def test_sync_tool_runs_in_the_calling_task() -> None:
    seen: list[object] = []

    class G:
        @tool("说明")
        def f(self) -> None:
            seen.append(trio.lowlevel.current_task())

    await G.f.invoke(G(), None, None)
    assert seen == [trio.lowlevel.current_task()]


# --- invoke: results -------------------------------------------------------------------------


async def test_dict_result_is_returned_as_is() -> None:
    payload = {"correct": True, "answer": "水"}

    class G:
        @tool("说明")
        def f(self) -> dict[str, object]:
            return payload

    assert await G.f.invoke(G(), None, None) is payload


async def test_none_result_becomes_ok() -> None:
    assert await Game.guess.invoke(Game(), None, '{"number": 1}') == {"ok": True}


@pytest.mark.parametrize("value", ["text", 3, 2.5, False, [1, "a"]])
async def test_other_json_results_are_wrapped(value: object) -> None:
    class G:
        @tool("说明")
        def f(self) -> object:
            return value

    result = await G.f.invoke(G(), None, None)
    assert result == {"result": value}
    json.dumps(result)


async def test_result_that_is_not_json_becomes_an_error() -> None:
    class G:
        @tool("说明")
        def f(self) -> object:
            return {"values": {1, 2}}

    result = await G.f.invoke(G(), None, None)
    assert result["error"] == (
        "f did not work: it returned something that is not JSON. "
        "Tell the player in one short sentence and carry on."
    )


# --- invoke: errors and cancellation ---------------------------------------------------------


async def test_sync_tool_exception_becomes_error() -> None:
    class G:
        @tool("说明")
        def f(self) -> None:
            raise ValueError("没有更多提示了")

    assert await G.f.invoke(G(), None, None) == {
        "error": "f did not work: 没有更多提示了. Tell the player in one short sentence and carry on."
    }


async def test_async_tool_exception_becomes_error() -> None:
    class G:
        @tool("说明")
        async def f(self) -> None:
            await trio.lowlevel.checkpoint()
            raise LookupError

    assert await G.f.invoke(G(), None, None) == {
        "error": "f did not work. Tell the player in one short sentence and carry on."
    }


async def test_cancellation_propagates_out_of_invoke(autojump_clock: MockClock) -> None:
    class G:
        @tool("说明")
        async def f(self) -> None:
            await trio.sleep_forever()

    with trio.move_on_after(1) as scope:
        await G.f.invoke(G(), None, None)
    assert scope.cancelled_caught
    assert trio.current_time() == 1


@pytest.mark.parametrize("raised", [KeyboardInterrupt, SystemExit])
async def test_a_tool_raising_a_process_ending_exception_raises_game_code_error(raised) -> None:
    """Issue 12 item 15: it would end the server; the host fails the session instead."""

    class G:
        @tool("说明")
        def f(self) -> None:
            raise raised

    with pytest.raises(GameCodeError, match="tool f raised"):
        await G.f.invoke(G(), None, None)


# --- judging tools (judges=True) --------------------------------------------------------------


class Line:
    """What a judging tool sees of the turn: the words and whether they were judged."""

    def __init__(self, *, judged: bool = False, text: str = "我猜是雨伞") -> None:
        self.text = text
        self.judged = judged


class Judge:
    def __init__(self) -> None:
        self.judged: list[str] = []

    @tool("判断用户说的答案（直接读取用户原话）。", judges=True)
    def check_answer(self, turn: Line) -> dict[str, bool]:
        self.judged.append(turn.text)
        return {"correct": True}


async def test_a_judging_tool_judges_a_line_once_and_marks_it_judged() -> None:
    game, line = Judge(), Line()
    assert await Judge.check_answer.invoke(game, line, None) == {"correct": True}
    assert line.judged
    assert await Judge.check_answer.invoke(game, line, None) == {"outcome": "already_judged"}
    assert game.judged == ["我猜是雨伞"]


async def test_a_judging_tool_is_not_called_for_a_line_on_message_judged() -> None:
    game = Judge()
    assert await Judge.check_answer.invoke(game, Line(judged=True), None) == {"outcome": "already_judged"}
    assert game.judged == []


@pytest.mark.parametrize("said", ["你叫什么名字", "我们聊聊天吧", "你好呀"])
async def test_a_judging_tool_is_not_run_for_small_talk_and_the_line_stays_unjudged(said: str) -> None:
    """Issue 38: a model called the judging tool for every line; small talk counted as judged."""
    game, line = Judge(), Line(text=said)
    assert await Judge.check_answer.invoke(game, line, None) == {"outcome": "small_talk"}
    assert not line.judged
    assert game.judged == []


async def test_a_guess_framed_line_is_judged_even_if_it_chats() -> None:
    game, line = Judge(), Line(text="我猜你喜欢的是雨伞")
    assert await Judge.check_answer.invoke(game, line, None) == {"correct": True}
    assert line.judged


def test_only_a_tool_declared_judging_is_one() -> None:
    assert Judge.check_answer.judges
    assert not Game.guess.judges
