// Example: ask the sidecar where a call should run, run it on Ollama's /api/chat there, and
// release the ticket. Run against a live sidecar:
//   node dist/clients/typescript/example.js [http://127.0.0.1:50051] [agent] [model]
import { schedulerClient, withTicket } from "./client.js";

const [baseUrl = "http://127.0.0.1:50051", agent = "default/example", model = "qwen3:8b"] =
  process.argv.slice(2);
const client = schedulerClient(baseUrl);
const messages = [{ role: "user", content: "In one sentence: why schedule inference calls per GPU?" }];
const promptChars = messages.reduce((n, m) => n + m.content.length, 0);

const answer = await withTicket(
  client,
  { agent, candidates: [{ model, score: 100 }], promptChars: BigInt(promptChars) },
  async (p) => {
    process.stdout.write(
      `placed on ${p.provider} (${p.endpoint}) model ${p.model}${p.coldLoad ? " cold" : " warm"}\n`,
    );
    const res = await fetch(`${p.endpoint}/api/chat`, {
      method: "POST",
      body: JSON.stringify({
        model: p.model,
        messages,
        stream: false,
        options: { num_ctx: Number(p.contextLength) || undefined },
      }),
    });
    if (!res.ok) throw new Error(`provider answered ${res.status}`);
    const body = (await res.json()) as {
      message: { content: string };
      prompt_eval_count: number;
      eval_count: number;
    };
    return {
      result: body.message.content,
      promptTokens: body.prompt_eval_count,
      outputTokens: body.eval_count,
    };
  },
);
process.stdout.write(`answer: ${answer}\n`);
