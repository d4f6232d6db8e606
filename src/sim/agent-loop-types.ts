// The shapes of agent loops (./agent-loops.ts): how a loop grows, and a turn's prompt by its
// parts. Their own file: the scenarios and the workload both name them.

/** How an agent loop grows. */
export interface AgentLoopShape {
  /** Turns (calls) per agent, uniform in [turnsMin, turnsMax]. */
  turnsMin: number;
  turnsMax: number;
  /** The system prompt with the tool list (tokens). */
  systemTokens: number;
  /** Probability that an agent uses its crew's shared system prompt rather than its own. */
  sharedSystem: number;
  /** The first question (tokens). */
  firstTokens: number;
  /** The context an agent's last turn sends (tokens), uniform in [contextMin, contextMax]. */
  contextMin: number;
  contextMax: number;
  /** Answer tokens per turn, uniform. */
  answerMin: number;
  answerMax: number;
  /** Tool execution between turns (s, exponential mean). */
  toolMeanS: number;
  /** Agents start within this window (s), uniformly, after `startAfterS`. */
  startWindowS: number;
  /**
   * When the first agent may start (s): every card loads the model at time 0 and keeps it
   * (keep_alive -1, as an operator pins a crew's model), so loops start on warm copies.
   */
  startAfterS: number;
}

/** One part of a loop's prompt: a key standing for its text, its tokens, and whether it is an answer. */
export interface LoopPart {
  key: string;
  tokens: number;
  assistant: boolean;
}

/** A turn's prompt: its conversation, its parts in order, and the answer it will get. */
export interface LoopPrompt {
  conversation: string;
  parts: LoopPart[];
  answer: LoopPart;
}
