// Compile-time check of a deployment's DRA selectors: each one that does not compile is an
// InvalidNodeSelector error naming the deployment, engine, member, request and selector index.
import { compileSelector } from "./cel.js";
import type { ModelDeployment } from "./types.js";

export function selectorErrors(d: ModelDeployment): string[] {
  const errors: string[] = [];
  d.engines.forEach((engine, e) => {
    engine.members.forEach((member, m) => {
      member.devices?.forEach((request, r) => {
        request.selectors.forEach((cel, s) => {
          const c = compileSelector(cel);
          if (c.ok) return;
          const field = `spec.template.spec.engines[${e}].members[${m}].nodeSelector.devices[${r}].selectors[${s}].cel`;
          errors.push(
            `ModelDeployment ${d.namespace}/${d.name}: ${field} (engine "${engine.name}", member ${m} ` +
              `${member.role}, request "${request.name}", selector ${s}): does not compile: ${c.error}`,
          );
        });
      });
    });
  });
  return errors;
}
