// pi's own parseTextToolCalls over many inputs, in one process.
// argv: <pi source dir> <tool names for pi's cases, comma-separated>.
// stdin: JSON lines {"text", "tools": [names]}.
// stdout: one line {"text", "tools", "origin", "result"} per input: first the inputs
// found in pi's own test files (origin "pi-test"), then each stdin line ("stdin").
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [source, caseTools] = process.argv.slice(2);
const protocol = join(source, "packages/ai/src/utils/tool-repair/text-protocol.ts");
const { parseTextToolCalls } = await import(pathToFileURL(protocol).href);

// Every string literal in pi's parser tests that holds an envelope opener is a case.
const ENVELOPE = /<pi:call|<tool_call|```|<function/;
const LITERAL = /'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`(?:[^`\\$]|\\[\s\S]|\$(?!\{))*`/g;
const testDirs = ["packages/ai/test", "packages/coding-agent/test"].map((d) => join(source, d));
const cases = new Set();
for (const dir of testDirs) {
  for (const name of readdirSync(dir)) {
    if (!name.endsWith(".test.ts")) continue;
    const code = readFileSync(join(dir, name), "utf-8");
    if (!/parseTextToolCalls|text-protocol|textToolCall/.test(code)) continue;
    const uncommented = code.replace(/^\s*\/\/.*$/gm, "");
    for (const [literal] of uncommented.matchAll(LITERAL)) {
      let value;
      try {
        value = new Function(`return ${literal}`)();
      } catch {
        continue;
      }
      if (typeof value === "string" && ENVELOPE.test(value)) cases.add(value);
    }
  }
}
const tool = (name) => ({ name, description: name, parameters: { type: "object", properties: {} } });
function emit(text, tools, origin) {
  const parsed = parseTextToolCalls(text, tools.map(tool));
  const calls = parsed.calls.map((c) => ({
    id: c.id,
    name: c.name,
    arguments: c.arguments,
    rawArguments: c.rawArguments,
    errorMessage: c.errorMessage,
  }));
  const result = { ...parsed, calls };
  process.stdout.write(`${JSON.stringify({ text, tools, origin, result })}\n`);
}

for (const text of cases) emit(text, caseTools.split(","), "pi-test");
for (const line of readFileSync(0, "utf-8").split("\n")) {
  if (!line.trim()) continue;
  const { text, tools } = JSON.parse(line);
  emit(text, tools, "stdin");
}
