// Node flags for the benches' child processes (servers, sidecars, proxies): BENCH_CHILD_NODE_ARGS,
// space-separated, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" to profile them (docs/benchmarks.md).
export function childNodeArgs(): string[] {
  return (process.env.BENCH_CHILD_NODE_ARGS ?? "").split(" ").filter((a) => a !== "");
}
