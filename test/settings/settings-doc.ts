// docs/settings.md, rendered from the settings registry (src/settings): the one list of every
// KUBEMOOT_* variable. test/settings/docs.test.ts checks that the file is current.
import { SETTING_SECTIONS, type Setting } from "../../src/settings/index.js";

const HEADER = `# Settings

<!-- Generated from src/settings by test/settings/docs.test.ts; do not edit by hand. To rewrite it:
npx vitest run --project integration test/settings/docs.test.ts -u -->

Every \`KUBEMOOT_*\` variable, declared once in \`src/settings/\` with its parser. Flags win over
variables, and a blank variable counts as unset. An invalid value stops the process at start
with a message that names the variable (or the flag it came from). Variables that one component
writes into another's environment (the operator's binding env, the webhook's injected sidecar)
are listed the same way, with their writer. \`kubemoot-scheduler <command> --help\` lists the
variables of one command.
`;

function cell(text: string): string {
  return text.replaceAll("|", "\\|");
}

function code(text: string): string {
  return text === "" ? "" : `\`${cell(text)}\``;
}

function defaults(s: Setting): string {
  // A default given in words ("X, else 90") is prose, a value is code.
  const base =
    s.defaultText === "" ? "none" : / /.test(s.defaultText) ? cell(s.defaultText) : code(s.defaultText);
  const per = Object.entries(s.defaultFor).map(([cmd, v]) => `${code(String(v))} for ${cmd}`);
  return [base, ...per].join(", ");
}

function row(s: Setting): string {
  const type = s.unit ? `${s.type} (${s.unit})` : s.type;
  const cells = [
    code(s.name),
    s.flag ? code(`--${s.flag}`) : "",
    type,
    defaults(s),
    s.readBy.join(", "),
    s.writtenBy.join(", "),
    cell(s.help),
  ];
  return `| ${cells.join(" | ")} |`;
}

export function renderSettingsDoc(): string {
  const parts = [HEADER];
  for (const section of SETTING_SECTIONS) {
    parts.push(
      `## ${section.title}`,
      "",
      "| variable | flag | type | default | read by | written by | what |",
      "|---|---|---|---|---|---|---|",
      ...Object.values(section.settings).map((s) => row(s as Setting)),
      "",
    );
  }
  return parts.join("\n");
}
