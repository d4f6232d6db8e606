// The web view's query parameters (docs/web-view.md "Routes"): each route names the ones it
// takes and their bounds; anything else (an unknown or repeated name, a value out of bounds or
// over 64 characters) is a 400 naming the parameter. `token` is taken everywhere: it is how a
// browser opens the view once when a token is asked (./auth.ts).
import { ErrorCode, KubemootError } from "../errors/index.js";

export type QueryRule =
  | { kind: "int"; min: number; max: number }
  | { kind: "choice"; values: readonly string[] };

export type QueryRules = Readonly<Record<string, QueryRule>>;

const MAX_VALUE = 64;
const MAX_TOKEN = 512;

export interface ReadQuery {
  values: Record<string, string>;
  token?: string;
  error?: KubemootError;
}

function bad(name: string, why: string): ReadQuery {
  return {
    values: {},
    error: new KubemootError(ErrorCode.InvalidArgument, `${name}: ${why}`, { field: name }),
  };
}

export function readQuery(params: URLSearchParams, rules: QueryRules): ReadQuery {
  const values: Record<string, string> = {};
  let token: string | undefined;
  const seen = new Set<string>();
  for (const [name, value] of params) {
    const shown = name.slice(0, 32);
    if (seen.has(name)) return bad(shown, "given more than once");
    seen.add(name);
    if (name === "token") {
      if (value.length === 0 || value.length > MAX_TOKEN) return bad("token", "empty or too long");
      token = value;
      continue;
    }
    const rule = rules[name];
    if (rule === undefined) return bad(shown, "not a parameter of this route");
    if (value.length > MAX_VALUE) return bad(name, `longer than ${MAX_VALUE} characters`);
    if (rule.kind === "int") {
      const n = Number(value);
      if (!/^\d+$/.test(value) || n < rule.min || n > rule.max) {
        return bad(name, `expected a whole number from ${rule.min} to ${rule.max}`);
      }
    } else if (!rule.values.includes(value)) {
      return bad(name, `expected one of ${rule.values.join(", ")}`);
    }
    values[name] = value;
  }
  return token === undefined ? { values } : { values, token };
}
