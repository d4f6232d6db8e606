// The one credential a webhook TopologySource presents, always read from a Secret so the
// TopologySource object itself never holds it. Exactly one of:
//
//   bearerTokenSecretRef       {namespace, name, key}  → `Authorization: Bearer <token>`
//   basicAuthSecretRef         {namespace, name}       → keys `username` and `password`
//                                                        (the kubernetes.io/basic-auth layout)
//   clientCertificateSecretRef {namespace, name}       → keys `tls.crt` and `tls.key`, PEM
//                                                        (the kubernetes.io/tls layout), for mTLS
//
// Messages name the Secret and the key, never a value read from it.
import { ErrorCode, invalidArgument, KubemootError } from "../../errors/index.js";

export interface SecretRef {
  namespace: string;
  name: string;
}

export interface SecretKeyRef extends SecretRef {
  key: string;
}

export type WebhookCredential =
  | { bearerTokenSecretRef: SecretKeyRef }
  | { basicAuthSecretRef: SecretRef }
  | { clientCertificateSecretRef: SecretRef };

/** A Secret as the API returns it: `data` values are base64, as in `Secret.data`. */
export interface SecretObject {
  data?: Record<string, string>;
}

/** Looks a Secret up (e.g. in an informer cache); undefined when it does not exist. */
export type SecretReader = (
  namespace: string,
  name: string,
) => SecretObject | undefined | Promise<SecretObject | undefined>;

/** A credential with its material read, ready to put on a request. */
export type ResolvedCredential =
  | { kind: "bearer"; token: string }
  | { kind: "basic"; username: string; password: string }
  | { kind: "clientCertificate"; cert: string; key: string };

const ARMS = ["bearerTokenSecretRef", "basicAuthSecretRef", "clientCertificateSecretRef"] as const;
const K8S_NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;
const SECRET_KEY = /^[-._a-zA-Z0-9]+$/;
// Header-safe bytes: visible ASCII and spaces. A CR/LF in a token would split the header.
const HEADER_SAFE = /^[\x20-\x7e]+$/;

/** Checks the shape: exactly one arm, with its references filled in. */
export function checkCredential(value: unknown, field: string): WebhookCredential {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw invalidArgument(field, `required: exactly one of ${ARMS.join(", ")}`);
  }
  const v = value as Record<string, unknown>;
  const unknownKeys = Object.keys(v).filter((k) => !(ARMS as readonly string[]).includes(k));
  if (unknownKeys.length > 0) {
    throw invalidArgument(field, `unknown field ${unknownKeys[0]} (expected one of ${ARMS.join(", ")})`);
  }
  const given = ARMS.filter((k) => v[k] !== undefined && v[k] !== null);
  if (given.length !== 1) {
    throw invalidArgument(
      field,
      given.length === 0
        ? `exactly one credential is required: one of ${ARMS.join(", ")}`
        : `exactly one credential is allowed, got ${given.join(" and ")}`,
    );
  }
  const arm = given[0]!;
  const ref = secretRef(v[arm], `${field}.${arm}`, arm === "bearerTokenSecretRef");
  if (arm === "bearerTokenSecretRef") return { bearerTokenSecretRef: ref as SecretKeyRef };
  if (arm === "basicAuthSecretRef") return { basicAuthSecretRef: ref };
  return { clientCertificateSecretRef: ref };
}

function secretRef(value: unknown, field: string, withKey: boolean): SecretRef | SecretKeyRef {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw invalidArgument(field, "expected an object with namespace and name");
  }
  const v = value as Record<string, unknown>;
  const namespace = refString(v.namespace, `${field}.namespace`, K8S_NAME);
  const name = refString(v.name, `${field}.name`, K8S_NAME);
  if (!withKey) return { namespace, name };
  return { namespace, name, key: refString(v.key, `${field}.key`, SECRET_KEY) };
}

function refString(v: unknown, field: string, pattern: RegExp): string {
  if (typeof v !== "string" || v === "") throw invalidArgument(field, "required");
  if (!pattern.test(v)) throw invalidArgument(field, `"${v}" is not a valid name`);
  return v;
}

/** The Secret a credential names, and the field naming it. */
export function credentialSecret(
  credential: WebhookCredential,
  field = "credential",
): { ref: SecretRef; field: string } {
  if ("bearerTokenSecretRef" in credential) {
    return { ref: credential.bearerTokenSecretRef, field: `${field}.bearerTokenSecretRef` };
  }
  if ("basicAuthSecretRef" in credential) {
    return { ref: credential.basicAuthSecretRef, field: `${field}.basicAuthSecretRef` };
  }
  return { ref: credential.clientCertificateSecretRef, field: `${field}.clientCertificateSecretRef` };
}

/**
 * Refuses a credential whose Secret is outside `namespace`, the operator's own: its Role grants
 * `get` on Secrets there and nowhere else, so a TopologySource cannot make the operator read
 * (and send to a host of its choosing) a Secret of another namespace.
 */
export function assertSecretNamespace(
  credential: WebhookCredential,
  namespace: string,
  field = "credential",
): void {
  const { ref, field: f } = credentialSecret(credential, field);
  if (ref.namespace !== namespace) {
    throw invalidArgument(
      `${f}.namespace`,
      `Secret ${ref.namespace}/${ref.name} is outside the operator's namespace "${namespace}": credential Secrets are read only from there`,
    );
  }
}

/** Reads the credential's material from its Secret. */
export async function resolveCredential(
  credential: WebhookCredential,
  readSecret: SecretReader,
  field = "credential",
): Promise<ResolvedCredential> {
  if ("bearerTokenSecretRef" in credential) {
    const ref = credential.bearerTokenSecretRef;
    // Token files often end in a newline; it is not part of the token.
    const token = (await secretValue(ref, ref.key, readSecret, `${field}.bearerTokenSecretRef`)).trim();
    headerSafe(token, ref, ref.key, `${field}.bearerTokenSecretRef`);
    return { kind: "bearer", token };
  }
  if ("basicAuthSecretRef" in credential) {
    const ref = credential.basicAuthSecretRef;
    const f = `${field}.basicAuthSecretRef`;
    const username = await secretValue(ref, "username", readSecret, f);
    const password = await secretValue(ref, "password", readSecret, f);
    headerSafe(username, ref, "username", f);
    headerSafe(password, ref, "password", f);
    if (username.includes(":")) {
      throw new KubemootError(ErrorCode.InvalidConfig, `${f}: ${where(ref, "username")} contains ":"`, {
        field: f,
      });
    }
    return { kind: "basic", username, password };
  }
  const ref = credential.clientCertificateSecretRef;
  const f = `${field}.clientCertificateSecretRef`;
  const cert = await secretValue(ref, "tls.crt", readSecret, f);
  const key = await secretValue(ref, "tls.key", readSecret, f);
  if (!cert.includes("-----BEGIN CERTIFICATE-----")) {
    throw new KubemootError(
      ErrorCode.InvalidConfig,
      `${f}: ${where(ref, "tls.crt")} is not a PEM certificate`,
      {
        field: f,
      },
    );
  }
  if (!/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(key)) {
    throw new KubemootError(
      ErrorCode.InvalidConfig,
      `${f}: ${where(ref, "tls.key")} is not a PEM private key`,
      {
        field: f,
      },
    );
  }
  return { kind: "clientCertificate", cert, key };
}

async function secretValue(ref: SecretRef, key: string, readSecret: SecretReader, field: string) {
  const secret = await readSecret(ref.namespace, ref.name);
  if (secret === undefined) {
    throw new KubemootError(ErrorCode.NotFound, `${field}: Secret ${ref.namespace}/${ref.name} not found`, {
      field,
    });
  }
  const encoded = secret.data?.[key];
  if (encoded === undefined) {
    throw new KubemootError(ErrorCode.NotFound, `${field}: ${where(ref, key)} not found`, { field });
  }
  const value = Buffer.from(encoded, "base64").toString("utf8");
  if (value.trim() === "") {
    throw new KubemootError(ErrorCode.InvalidConfig, `${field}: ${where(ref, key)} is empty`, { field });
  }
  return value;
}

function headerSafe(value: string, ref: SecretRef, key: string, field: string): void {
  if (!HEADER_SAFE.test(value)) {
    throw new KubemootError(
      ErrorCode.InvalidConfig,
      `${field}: ${where(ref, key)} holds characters not allowed in an HTTP header`,
      { field },
    );
  }
}

function where(ref: SecretRef, key: string): string {
  return `key "${key}" of Secret ${ref.namespace}/${ref.name}`;
}

/** The Authorization header value, or undefined for a client certificate. */
export function authorizationHeader(c: ResolvedCredential): string | undefined {
  if (c.kind === "bearer") return `Bearer ${c.token}`;
  if (c.kind === "basic") return `Basic ${Buffer.from(`${c.username}:${c.password}`).toString("base64")}`;
  return undefined;
}
