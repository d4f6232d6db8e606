// The operator's reconcile loop. Typical use (the `operator` and `standalone` commands):
//
//   const { source, sink } = createFileBinding({ manifests, outDir });   // or createKubernetesBinding()
//   const r = await startReconciler({ source, sink, logger, onProviders: publisher.setProviders });
//   publisher.onStates((states) => r.setProviderStates(states));
//   …
//   await r.stop();
export { type Reconciler, startReconciler } from "./reconciler.js";
