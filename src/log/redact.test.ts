import { describe, expect, it } from "vitest";
import { redactSecrets, redactUrl } from "./redact.js";

describe("redactSecrets", () => {
  it("hides the userinfo of URLs, user and password or a lone token", () => {
    expect(redactUrl("nats://user:secret@127.0.0.1:1")).toBe("nats://***@127.0.0.1:1");
    expect(redactUrl(["nats://tok3n@a:4222", "tls://u:p@b:4222"])).toBe("nats://***@a:4222,tls://***@b:4222");
    expect(redactSecrets("cannot connect to nats://u:p%40ss@h:4222: refused")).toBe(
      "cannot connect to nats://***@h:4222: refused",
    );
  });

  it("hides password and token values in messages", () => {
    expect(redactSecrets("auth failed: pass=hunter2 user=bob")).toBe("auth failed: pass=*** user=bob");
    expect(redactSecrets('{"token":"abc.def","name":"x"}')).toBe('{"token":"***","name":"x"}');
    expect(redactSecrets("Authorization: Bearer xyz")).toBe("Authorization: ***");
  });

  it("leaves text without secrets alone", () => {
    const s = "nats://127.0.0.1:4222 is unreachable (ECONNREFUSED), user@example.com wrote";
    expect(redactSecrets(s)).toBe(s);
  });
});
