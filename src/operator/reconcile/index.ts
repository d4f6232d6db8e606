// The operator's reconcile loop. Typical use (the `operator` and `standalone` commands):
//
//   const { source, sink } = createFileBinding({ manifests, outDir });   // or createKubernetesBinding()
//   const r = await startReconciler({ source, sink, logger, onProviders: publisher.setProviders });
//   publisher.onStates((states) => r.setProviderStates(states));
//   …
//   await r.stop();
export {
  DEFAULT_ERROR_BACKOFF_MS,
  DEFAULT_RECONCILE_DEBOUNCE_MS,
  keepObservedAt,
  type ReconcileResult,
  type Reconciler,
  type ReconcilerOptions,
  startReconciler,
} from "./reconciler.js";
