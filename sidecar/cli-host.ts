// The sidecar's side of the CLI (docs/design.md §3): the SidecarHost that
// bin/kubemoot-scheduler.js passes to the CLI's main, so that src/ never imports sidecar/.
// Each start loads its modules on first use, so commands that start no sidecar stay quick.
import type { LaunchedSidecar, SidecarHost } from "../src/cli/index.js";

export const sidecarHost: SidecarHost = {
  async startSidecar(o): Promise<LaunchedSidecar> {
    const [{ startSidecar }, { proxyExtra }] = await Promise.all([
      import("./main.js"),
      import("./with-proxy.js"),
    ]);
    let proxyAddress = "";
    const { proxyListen, proxy, ...rest } = o;
    const sidecar = await startSidecar({
      ...rest,
      ...(proxyListen
        ? {
            extras: proxyExtra(
              proxyListen,
              proxy,
              (a) => {
                proxyAddress = a;
              },
              o.limits,
            ),
          }
        : {}),
    });
    return { api: sidecar.api, proxyAddress, close: () => sidecar.close() };
  },
  async startStandalone(o) {
    const { startStandalone } = await import("./standalone.js");
    return startStandalone(o);
  },
};
