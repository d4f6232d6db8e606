"""A Python client of the Kubemoot sidecar using Connect JSON over HTTP/1.1.

Standard library only (urllib), so it runs anywhere Python 3.8+ does. Every RPC is a POST of
JSON to /kubemoot.scheduler.v1.SchedulerService/<Method>; errors come back as HTTP 4xx/5xx
with {"code", "message"} and are raised as SchedulerError.
"""

import json
import time
import urllib.error
import urllib.request

SERVICE = "kubemoot.scheduler.v1.SchedulerService"


class SchedulerError(Exception):
    """An RPC error: `code` is the Connect code (e.g. "invalid_argument")."""

    def __init__(self, code, message, status):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.status = status


class Refused(Exception):
    """Place answered with a refusal (reason, model, message)."""

    def __init__(self, refusal):
        super().__init__(f"{refusal.get('reason')}: {refusal.get('message')}")
        self.refusal = refusal


class SchedulerClient:
    def __init__(self, base_url="http://127.0.0.1:50051", timeout=30.0):
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout

    def call(self, method, request):
        req = urllib.request.Request(
            f"{self.base_url}/{SERVICE}/{method}",
            data=json.dumps(request).encode(),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as res:
                return json.loads(res.read() or b"{}")
        except urllib.error.HTTPError as err:
            body = json.loads(err.read() or b"{}")
            raise SchedulerError(body.get("code", "unknown"), body.get("message", ""), err.code) from None

    def place(self, agent, candidates, prompt_chars=0, prompt_tokens=0, thread_id=""):
        """One placement attempt: returns the placement dict or raises Refused."""
        res = self.call(
            "Place",
            {
                "agent": agent,
                "threadId": thread_id,
                "candidates": [{"model": m, "score": s} for m, s in candidates],
                "promptChars": prompt_chars,
                "promptTokens": prompt_tokens,
            },
        )
        if "placement" in res:
            return res["placement"]
        raise Refused(res.get("refusal", {}))

    def place_waiting(self, agent, candidates, prompt_chars=0, limit_s=90.0, backoff_s=0.5):
        """Place, retrying while every GPU is busy (gpu-busy), up to `limit_s` seconds.

        (The server-streaming Wait RPC needs a streaming client; this is the simple loop.)
        """
        deadline = time.monotonic() + limit_s
        while True:
            try:
                return self.place(agent, candidates, prompt_chars=prompt_chars)
            except Refused as refused:
                if refused.refusal.get("reason") != "REASON_GPU_BUSY" or time.monotonic() >= deadline:
                    raise
                time.sleep(backoff_s)

    def release(self, ticket_id, success=None, latency_ms=0, prompt_tokens=0, prompt_chars=0, error=""):
        """Ends a ticket. success=True/False reports the outcome; None leaves it unspecified
        (neutral: it never counts against the provider)."""
        outcome = {True: "CALL_OUTCOME_SUCCEEDED", False: "CALL_OUTCOME_FAILED"}.get(success, "CALL_OUTCOME_UNSPECIFIED")
        res = self.call(
            "Release",
            {
                "ticketId": ticket_id,
                "outcome": outcome,
                "latencyMs": int(latency_ms),
                "promptTokens": int(prompt_tokens),
                "promptChars": int(prompt_chars),
                "error": error,
            },
        )
        return bool(res.get("released", False))

    def attribute(self, ticket_id):
        return self.call("Attribute", {"ticketId": ticket_id})
