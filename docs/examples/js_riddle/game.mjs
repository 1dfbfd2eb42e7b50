// 一个不用 Python 写的 agentcade/1 游戏：猜谜语，写在官方的 A2A JavaScript SDK（@a2a-js/sdk，A2A 1.0）上。
// 运行：npm install && PORT=7860 node game.mjs；检查：agentcade check http://127.0.0.1:7860/
// 它演示三件 Python 游戏不用操心的事（见 docs/guide.zh-CN.md 的“不用 Python 写”）：
//   1. 每个请求的第一条事件必须是 task 或者一条 message（SDK 的要求）；
//   2. 一问一答的回复，可以只回一条“裸的”Message（end、不存在的局）；
//   3. 设备指令的 timing：点头、摇头写 with_text，和判定的话一起做，不然会在话之前做完。
import { randomUUID } from "node:crypto";
import express from "express";
import { AgentCard, Message, Task, TaskStatusUpdateEvent } from "@a2a-js/sdk";
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from "@a2a-js/sdk/server";
import { UserBuilder, agentCardHandler, jsonRpcHandler } from "@a2a-js/sdk/server/express";

const PROTOCOL = "agentcade/1";
const RIDDLES = [
  { question: "什么东西越洗越脏？", answer: "水", aliases: ["清水"], hint: "每天都要喝它。" },
  { question: "什么东西有脚不会走？", answer: "桌子", aliases: ["凳子", "椅子"], hint: "吃饭的时候用得到。" },
];
const NOD = { call: "motion.play_action", args: ["nod"], timing: "with_text" };
const SHAKE = { call: "motion.play_action", args: ["shake_head"], timing: "with_text" };

// 一局游戏的状态，按 contextId 记住；agentcade 每一局都用一个新的 contextId。
const sessions = new Map();

function reply(text, { directives = [], session = "active" } = {}) {
  return { protocol: PROTOCOL, text, directives, session };
}

// 判定一句话。真正的游戏要容忍语音识别的错别字（agentcade.judge.is_match 的规则）；这里只做包含判断。
function play(kind, text, state) {
  if (kind === "start") {
    return reply(`我们来猜谜语！${RIDDLES[state.index].question}`);
  }
  if (kind === "end") {
    return reply(`谜底是${RIDDLES[state.index].answer}，下次再玩。`, { session: "ended" });
  }
  const riddle = RIDDLES[state.index];
  if (/提示|不知道/.test(text)) {
    return reply(`给你一个提示：${riddle.hint}`);
  }
  if (/放弃|猜不出|答案/.test(text)) {
    state.index = (state.index + 1) % RIDDLES.length;
    return reply(`谜底是${riddle.answer}。下一个：${RIDDLES[state.index].question}`);
  }
  if (/下一个|再来/.test(text)) {
    state.index = (state.index + 1) % RIDDLES.length;
    return reply(`好，下一个：${RIDDLES[state.index].question}`);
  }
  if ([riddle.answer, ...riddle.aliases].some((word) => text.includes(word))) {
    state.index = (state.index + 1) % RIDDLES.length;
    return reply(`猜对了，就是${riddle.answer}！下一个：${RIDDLES[state.index].question}`, { directives: [NOD] });
  }
  return reply("不对哦，再想想，也可以要个提示。", { directives: [SHAKE] });
}

// agentcade 的回复放在 DataPart 里（再带一个 TextPart，给只认文字的 A2A 客户端看）。
function agentMessage(gameReply, contextId, taskId) {
  const parts = [{ data: gameReply }];
  if (gameReply.text) parts.push({ text: gameReply.text });
  return Message.fromJSON({ messageId: randomUUID(), contextId, taskId, role: "ROLE_AGENT", parts });
}

function gameInputOf(message) {
  const part = message.parts.find((p) => p.content?.$case === "data");
  return part ? part.content.value : { kind: "message", text: "" };
}

class RiddleExecutor {
  async execute(context, bus) {
    const input = gameInputOf(context.userMessage);
    const { contextId, taskId } = context;
    let state = sessions.get(contextId);
    if (input.kind === "start") {
      state = { index: Math.floor(Math.random() * RIDDLES.length) };
      sessions.set(contextId, state);
    }
    if (state === undefined || input.kind === "end") {
      // 一问一答：一条裸的 Message 就是完整的回复（最后一条）。
      const text = state === undefined ? "这一局已经结束了。" : undefined;
      const gameReply = text ? reply(text, { session: "ended" }) : play("end", "", state);
      sessions.delete(contextId);
      bus.publish(AgentEvent.message(agentMessage(gameReply, contextId, "")));
      bus.finished();
      return;
    }
    const gameReply = play(input.kind, String(input.text ?? ""), state);
    // 流式：先发 task（SDK 要求第一条事件是 task 或 message），中间回复是 WORKING，最后一条是 COMPLETED。
    bus.publish(AgentEvent.task(Task.fromJSON({
      id: taskId, contextId, status: { state: "TASK_STATE_SUBMITTED" }, history: [context.userMessage],
    })));
    if (input.kind === "start") {
      const hello = reply("", { directives: [{ call: "motion.play_action", args: ["nod"] }] });
      bus.publish(AgentEvent.statusUpdate(statusUpdate(hello, contextId, taskId, "TASK_STATE_WORKING")));
    }
    bus.publish(AgentEvent.statusUpdate(statusUpdate(gameReply, contextId, taskId, "TASK_STATE_COMPLETED")));
    bus.finished();
  }

  async cancelTask(taskId, bus) {
    bus.finished();
  }
}

function statusUpdate(gameReply, contextId, taskId, state) {
  const update = TaskStatusUpdateEvent.fromJSON({ taskId, contextId, status: { state } });
  update.status.message = agentMessage(gameReply, contextId, taskId);
  return update;
}

function card(baseUrl) {
  return AgentCard.fromJSON({
    name: "JS 猜谜语",
    description: "用 JavaScript 写的猜谜语：猜对了点头，猜错了摇头。",
    version: "0.1.0",
    provider: { organization: "agentcade examples", url: "https://example.org/js-riddle" },
    supportedInterfaces: [{ url: baseUrl, protocolBinding: "JSONRPC", protocolVersion: "1.0" }],
    capabilities: { streaming: true },
    defaultInputModes: ["application/json", "text/plain"],
    defaultOutputModes: ["application/json", "text/plain"],
    skills: [{
      id: "js_riddle",
      name: "JS 猜谜语",
      description: "用 JavaScript 写的猜谜语",
      tags: [PROTOCOL, "capability:motion"],
      examples: ["JS 谜语", "脚本谜语"],  // 别名：“JS”念出来不好认，孩子说“玩脚本谜语”也能开始
    }],
  });
}

const port = Number(process.env.PORT ?? 7860);
const app = express();
const server = app.listen(port, "127.0.0.1", () => {
  const actual = server.address().port;
  const agentCard = card(process.env.PUBLIC_URL ?? `http://127.0.0.1:${actual}/`);
  const handler = new DefaultRequestHandler(agentCard, new InMemoryTaskStore(), new RiddleExecutor());
  app.use("/.well-known/agent-card.json", agentCardHandler({ agentCardProvider: handler }));
  app.use("/", jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  console.log(`listening on http://127.0.0.1:${actual}/`);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
