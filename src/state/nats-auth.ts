// How a NATS credentials file authenticates: a full credentials file (user JWT + nkey seed,
// for servers in operator/JWT mode), or a bare nkey seed (a user listed by its public nkey in
// the server's `authorization { users }`, as the chart renders them: docs/deploy.md).
import { type Authenticator, credsAuthenticator, nkeyAuthenticator } from "@nats-io/transport-node";

/** A user seed: "SU" and base32 (nkeys' encoding); nothing else on the line. */
const USER_SEED = /^SU[A-Z2-7]{56}$/;

export function authenticatorFor(file: Uint8Array): Authenticator {
  const text = Buffer.from(file).toString("utf8").trim();
  if (USER_SEED.test(text)) return nkeyAuthenticator(new TextEncoder().encode(text));
  return credsAuthenticator(file);
}
