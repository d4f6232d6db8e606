#!/usr/bin/env bash
# Calling the sidecar with curl (Connect JSON over HTTP/1.1). Usage:
#   clients/curl/examples.sh [http://127.0.0.1:50051] [agent] [model]
set -euo pipefail
API="${1:-http://127.0.0.1:50051}"
AGENT="${2:-default/example}"
MODEL="${3:-qwen3:8b}"
SVC="$API/kubemoot.scheduler.v1.SchedulerService"

# Place: where should this call run?
placement=$(curl -sS -X POST "$SVC/Place" -H 'content-type: application/json' \
  -d "{\"agent\":\"$AGENT\",\"candidates\":[{\"model\":\"$MODEL\",\"score\":100}],\"promptChars\":1200}")
echo "Place: $placement"
ticket=$(printf '%s' "$placement" | sed -n 's/.*"ticketId":"\([^"]*\)".*/\1/p')
if [ -z "$ticket" ]; then echo "refused" >&2; exit 1; fi

# ... run the call at the placement's endpoint, then Release with the outcome:
curl -sS -X POST "$SVC/Release" -H 'content-type: application/json' \
  -d "{\"ticketId\":\"$ticket\",\"outcome\":\"CALL_OUTCOME_SUCCEEDED\",\"latencyMs\":850,\"promptTokens\":300,\"promptChars\":1200}"
echo

# Attribute: what did it run on?
curl -sS -X POST "$SVC/Attribute" -H 'content-type: application/json' -d "{\"ticketId\":\"$ticket\"}"
echo

# Health (liveness, readiness) and metrics:
curl -sS "$API/healthz"; echo
curl -sS "$API/readyz"; echo
curl -sS "$API/metrics" | grep '^kubemoot_place_total' || true
