import { nkeys } from "@nats-io/transport-node";
import { describe, expect, it } from "vitest";
import { authenticatorFor } from "./nats-auth.js";

const enc = new TextEncoder();
const user = nkeys.createUser();
const seed = new TextDecoder().decode(user.getSeed());
const nonce = "nonce-from-the-server";

describe("authenticatorFor", () => {
  it("signs with a bare nkey seed (a trailing newline allowed), sending no JWT", () => {
    const auth = authenticatorFor(enc.encode(`${seed}\n`))(nonce) as {
      nkey: string;
      sig: string;
      jwt?: string;
    };
    expect(auth.nkey).toBe(user.getPublicKey());
    expect(auth.jwt).toBeUndefined();
    expect(nkeys.fromPublic(auth.nkey).verify(enc.encode(nonce), Buffer.from(auth.sig, "base64url"))).toBe(
      true,
    );
  });

  it("reads a credentials file: its JWT and the seed's signature", () => {
    const creds = `-----BEGIN NATS USER JWT-----\neyJhbGciOi.fake.jwt\n------END NATS USER JWT------\n\n-----BEGIN USER NKEY SEED-----\n${seed}\n------END USER NKEY SEED------\n`;
    const auth = authenticatorFor(enc.encode(creds))(nonce) as { nkey: string; jwt?: string };
    expect(auth.jwt).toBe("eyJhbGciOi.fake.jwt");
    expect(auth.nkey).toBe(user.getPublicKey());
  });
});
