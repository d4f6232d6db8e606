// Test-time PKI made with the openssl CLI in a temp dir: a CA that signs the server's
// certificate (SANs localhost and 127.0.0.1) and a client certificate for mTLS, plus an
// unrelated CA to play the wrong trust anchor. Nothing is committed; keys live for one run.
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);
const OPENSSL = "/usr/bin/openssl";

export interface TestPki {
  dir: string;
  caCert: string;
  otherCaCert: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  /** Subject CN of the client certificate. */
  clientCn: string;
  cleanup(): Promise<void>;
}

async function openssl(dir: string, args: string[]): Promise<void> {
  await run(OPENSSL, args, { cwd: dir });
}

async function selfSignedCa(dir: string, name: string): Promise<void> {
  await openssl(dir, [
    "req",
    "-x509",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
    "-keyout",
    `${name}.key`,
    "-out",
    `${name}.crt`,
    "-days",
    "2",
    "-subj",
    `/CN=${name}`,
    "-addext",
    "basicConstraints=critical,CA:TRUE",
    "-addext",
    "keyUsage=critical,keyCertSign,cRLSign",
  ]);
}

async function leaf(dir: string, name: string, cn: string, ext: string): Promise<void> {
  await openssl(dir, [
    "req",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
    "-keyout",
    `${name}.key`,
    "-out",
    `${name}.csr`,
    "-subj",
    `/CN=${cn}`,
  ]);
  await writeFile(join(dir, `${name}.ext`), ext);
  await openssl(dir, [
    "x509",
    "-req",
    "-in",
    `${name}.csr`,
    "-CA",
    "ca.crt",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-out",
    `${name}.crt`,
    "-days",
    "2",
    "-extfile",
    `${name}.ext`,
  ]);
}

export async function makeTestPki(): Promise<TestPki> {
  const dir = await mkdtemp(join(tmpdir(), "kubemoot-topology-pki-"));
  const clientCn = "kubemoot-topology-reader";
  await selfSignedCa(dir, "ca");
  await selfSignedCa(dir, "other-ca");
  await leaf(
    dir,
    "server",
    "localhost",
    "basicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1\n",
  );
  await leaf(
    dir,
    "client",
    clientCn,
    "basicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=clientAuth\n",
  );
  const read = (f: string) => readFile(join(dir, f), "utf8");
  return {
    dir,
    caCert: await read("ca.crt"),
    otherCaCert: await read("other-ca.crt"),
    serverCert: await read("server.crt"),
    serverKey: await read("server.key"),
    clientCert: await read("client.crt"),
    clientKey: await read("client.key"),
    clientCn,
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}
