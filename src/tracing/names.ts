// The span names and attributes we emit (docs/tracing.md): the OpenTelemetry GenAI, RPC and HTTP
// semantic conventions' keys as written there, and our own `kubemoot.*` keys for the placement
// span, which no convention covers. One table, so that no other file spells a key.
export const ATTR = {
  genAiOperation: "gen_ai.operation.name",
  genAiProvider: "gen_ai.provider.name",
  genAiRequestModel: "gen_ai.request.model",
  genAiResponseModel: "gen_ai.response.model",
  genAiInputTokens: "gen_ai.usage.input_tokens",
  genAiOutputTokens: "gen_ai.usage.output_tokens",
  genAiCacheReadTokens: "gen_ai.usage.cache_read.input_tokens",
  genAiFinishReasons: "gen_ai.response.finish_reasons",
  genAiStream: "gen_ai.request.stream",
  serverAddress: "server.address",
  serverPort: "server.port",
  errorType: "error.type",
  httpMethod: "http.request.method",
  httpStatus: "http.response.status_code",
  urlFull: "url.full",
  rpcSystem: "rpc.system",
  rpcService: "rpc.service",
  rpcMethod: "rpc.method",
  rpcGrpcStatus: "rpc.grpc.status_code",
  rpcConnectError: "rpc.connect_rpc.error_code",
  /** Ours: time to first token (seconds), on the proxied call's span. */
  ttftS: "kubemoot.ttft_s",
  placeProvider: "kubemoot.place.provider",
  placeModel: "kubemoot.place.model",
  placeEngine: "kubemoot.place.engine",
  placeCold: "kubemoot.place.cold",
  placeEvicted: "kubemoot.place.evicted",
  placeQueueWaitS: "kubemoot.place.queue_wait_s",
  placeRefusal: "kubemoot.place.refusal_reason",
  placePolicy: "kubemoot.place.policy",
  placeExpectedS: "kubemoot.place.expected_s",
  placeRunnerUpS: "kubemoot.place.runner_up_s",
  placeRunnerUp: "kubemoot.place.runner_up",
  placeReplans: "kubemoot.place.replans",
  placeTicket: "kubemoot.place.ticket_id",
  placeAgent: "kubemoot.place.agent",
  placeBand: "kubemoot.place.priority",
  placeBindingRevision: "kubemoot.binding.revision",
} as const;

export const SPAN = {
  place: "kubemoot.place",
} as const;

export const EVENT = {
  waiting: "kubemoot.waiting",
  replan: "kubemoot.replan",
  claimConflict: "kubemoot.claim_conflict",
  firstChunk: "gen_ai.first_chunk",
} as const;
