// Loading a KubeConfig: the usual chain (KUBECONFIG, ~/.kube/config, in-cluster service
// account), a named file, the in-cluster config explicitly, or a bare server URL without
// credentials (`kubectl proxy`, and the tests' fake API server).
import { KubeConfig } from "@kubernetes/client-node";
import { ErrorCode, KubemootError } from "../../errors/index.js";

export interface KubeConfigOptions {
  /** A kubeconfig file; default: KUBECONFIG, then ~/.kube/config, then in-cluster. */
  kubeconfig?: string;
  /** A context of the kubeconfig other than its current one. */
  context?: string;
  /** Use the pod's service account (KUBERNETES_SERVICE_HOST/PORT and the mounted token). */
  inCluster?: boolean;
  /** A server URL used without credentials, e.g. http://127.0.0.1:8001 from `kubectl proxy`. */
  server?: string;
}

export function loadKubeConfig(options: KubeConfigOptions = {}): KubeConfig {
  if (options.server !== undefined) return kubeConfigForServer(options.server);
  const kc = new KubeConfig();
  if (options.inCluster) kc.loadFromCluster();
  else if (options.kubeconfig !== undefined) kc.loadFromFile(options.kubeconfig);
  else kc.loadFromDefault();
  if (options.context !== undefined) kc.setCurrentContext(options.context);
  if (!kc.getCurrentCluster())
    throw new KubemootError(ErrorCode.InvalidConfig, "kubeconfig: no current cluster");
  return kc;
}

/** A KubeConfig for one server URL, no authentication. */
export function kubeConfigForServer(server: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    // client-node refuses plain http unless TLS verification is off (there is no TLS to verify).
    clusters: [{ name: "server", server, skipTLSVerify: server.startsWith("http://") }],
    users: [{ name: "anonymous" }],
    contexts: [{ name: "server", cluster: "server", user: "anonymous" }],
    currentContext: "server",
  });
  return kc;
}
