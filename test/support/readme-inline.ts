import type { ReadmeCommand } from './readme-blocks.ts';

// The README's commands that stand in its prose rather than in a shell block, as code spans: "`npm run
// dev` runs the TypeScript sources". A reader runs those as written too, so they are covered like the
// block commands (test/support/readme-coverage.ts).
//
// The rule: a code span outside fenced blocks (it may wrap onto the next line) is a command when,
// after any leading `NAME=value` assignments, its first word is one of COMMAND_WORDS and something
// follows that word, or an assignment comes before it. So `npm run dev`, `CLUSTER=auto npm start` and
// `apt-get install chromium` are commands; `npm` or `node` alone names a program, and `WORKERS=0` or
// `HOST=0.0.0.0` alone names a setting, and neither is.

export const COMMAND_WORDS = [
  'npm', 'npx', 'node', 'tsx', 'vite', 'vitest', 'gateway', 'curl', 'wget', 'git', 'bash', 'sh', 'sudo',
  'apt-get', 'apt', 'psql', 'redis-cli', 'docker', 'nginx', 'kill', 'export',
];

const ASSIGNMENT = /^[A-Z_][A-Z0-9_]*=\S*$/;

export function isCommand(span: string): boolean {
  const words = span.split(' ');
  const assignments = words.findIndex((word) => !ASSIGNMENT.test(word));
  if (assignments < 0) return false;
  const rest = words.slice(assignments);
  return COMMAND_WORDS.includes(rest[0]!) && (rest.length > 1 || assignments > 0);
}

/** Each distinct inline command once, at the line where it first appears. */
export function readmeInlineCommands(markdown: string): ReadmeCommand[] {
  // Fenced blocks are blanked line by line, so offsets still give the README's line numbers.
  let fenced = false;
  const prose = markdown
    .split('\n')
    .map((line) => {
      if (line.startsWith('```')) {
        fenced = !fenced;
        return '';
      }
      return fenced ? '' : line;
    })
    .join('\n');
  const found = new Map<string, ReadmeCommand>();
  // A span ends at its closing backtick and never crosses a blank line (the end of a paragraph).
  for (const match of prose.matchAll(/`((?:[^`\n]|\n(?![ \t]*\n))+)`/g)) {
    const text = match[1]!.replace(/\s+/g, ' ').trim();
    if (!isCommand(text) || found.has(text)) continue;
    found.set(text, { text, line: prose.slice(0, match.index).split('\n').length, shown: [] });
  }
  return [...found.values()];
}
