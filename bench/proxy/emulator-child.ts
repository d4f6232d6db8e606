// Child process of the proxy benchmark: one emulator with the options given as JSON in argv[2].
// Prints "READY <url>" once it listens; exits on SIGTERM or when stdin closes.
import { type EmulatorOptions, startEmulator } from "../../src/emulator/index.js";

async function main(): Promise<void> {
  const options = JSON.parse(process.argv[2] ?? "{}") as EmulatorOptions;
  const emu = await startEmulator({ listen: "127.0.0.1:0", ...options });
  process.stdout.write(`READY ${emu.url}\n`);
  const stop = () => {
    void emu.close().then(() => process.exit(0));
  };
  process.once("SIGTERM", stop);
  process.stdin.on("end", stop);
  process.stdin.resume();
}

main().catch((err) => {
  process.stderr.write(`emulator-child: ${err?.stack ?? err}\n`);
  process.exit(1);
});
