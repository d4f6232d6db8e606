"""Example: place a call, run it on the chosen Ollama, release the ticket.

    python3 clients/python/example.py [http://127.0.0.1:50051] [agent] [model]
"""

import json
import sys
import time
import urllib.request

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from kubemoot_client import SchedulerClient  # noqa: E402


def main():
    base_url = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:50051"
    agent = sys.argv[2] if len(sys.argv) > 2 else "default/example"
    model = sys.argv[3] if len(sys.argv) > 3 else "qwen3:8b"
    client = SchedulerClient(base_url)
    messages = [{"role": "user", "content": "In one sentence: why schedule inference calls per GPU?"}]
    chars = sum(len(m["content"]) for m in messages)
    p = client.place_waiting(agent, [(model, 100)], prompt_chars=chars)
    print(f"placed on {p['provider']} ({p['endpoint']}) model {p['model']} cold={p.get('coldLoad', False)}")
    started = time.monotonic()
    ok, tokens, err = False, 0, ""
    try:
        body = json.dumps({"model": p["model"], "messages": messages, "stream": False}).encode()
        req = urllib.request.Request(f"{p['endpoint']}/api/chat", data=body, method="POST")
        with urllib.request.urlopen(req, timeout=120) as res:
            answer = json.loads(res.read())
        tokens = answer.get("prompt_eval_count", 0)
        ok = True
        print("answer:", answer["message"]["content"])
    except Exception as exc:  # report any failure to the scheduler, then re-raise
        err = str(exc)
        raise
    finally:
        released = client.release(
            p["ticketId"],
            success=ok,
            latency_ms=(time.monotonic() - started) * 1000,
            prompt_tokens=tokens,
            prompt_chars=chars,
            error=err,
        )
        print("released:", released)


if __name__ == "__main__":
    main()
