export { type OperatorOptions, publishedProvider, type RunningOperator, startOperator } from "./operator.js";
