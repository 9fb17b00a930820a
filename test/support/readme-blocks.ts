// The README's shell examples as a reader meets them: fenced shell blocks, each cut into command lines
// (backslash continuations and quotes left open across lines joined, comments dropped) and, under a
// command, the output its comment lines show (`# {...}`; in a console block, the lines without `$ `).

export interface ShownOutput {
  /** The words before the JSON on its comment line: '' or '->' for an answer, 'OpenAI receives' for a claim. */
  lead: string;
  json: string;
}

export interface ReadmeCommand {
  text: string;
  /** 1-based line of README.md where the command starts. */
  line: number;
  shown: ShownOutput[];
}

export interface ReadmeBlock {
  line: number;
  commands: ReadmeCommand[];
}

const SHELL_FENCES = /^```(sh|bash|shell|console)\s*$/;

interface Scan {
  text: string;
  quote: "'" | '"' | null;
  /** The line ended inside quotes or with a backslash: the command goes on. */
  continues: boolean;
}

/** One physical line as the shell reads it: quotes tracked across lines, a word-initial `#` ends it. */
function scanLine(line: string, quote: Scan['quote']): Scan {
  let text = '';
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote === "'") {
      if (c === "'") quote = null;
    } else if (quote === '"') {
      if (c === '\\') {
        text += c + (line[++i] ?? '');
        continue;
      }
      if (c === '"') quote = null;
    } else if (c === '\\' && i === line.length - 1) {
      return { text: text.trimEnd(), quote, continues: true };
    } else if (c === '\\') {
      text += c + (line[++i] ?? '');
      continue;
    } else if (c === "'" || c === '"') {
      quote = c;
    } else if (c === '#' && (i === 0 || /\s/.test(line[i - 1]!))) {
      return { text: text.trimEnd(), quote, continues: false };
    }
    text += c;
  }
  return { text, quote, continues: quote !== null };
}

/** Every JSON object shown in a command's output comments, with the words that lead into it. */
export function shownOutputs(comment: string): ShownOutput[] {
  const found: ShownOutput[] = [];
  let from = 0;
  for (let start = comment.indexOf('{'); start >= 0; start = comment.indexOf('{', from)) {
    let depth = 0;
    let inString = false;
    let end = start;
    for (; end < comment.length; end++) {
      const c = comment[end]!;
      if (inString) {
        if (c === '\\') end++;
        else if (c === '"') inString = false;
      } else if (c === '"') inString = true;
      else if (c === '{' || c === '[') depth++;
      else if ((c === '}' || c === ']') && --depth === 0) break;
    }
    const lead = comment.slice(from, start).split('\n').at(-1)!.trim();
    found.push({ lead, json: comment.slice(start, end + 1).replace(/\n/g, ' ') });
    from = end + 1;
  }
  return found;
}

export function readmeShellBlocks(markdown: string): ReadmeBlock[] {
  const lines = markdown.split('\n');
  const blocks: ReadmeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = SHELL_FENCES.exec(lines[i]!);
    if (!fence) continue;
    const block: ReadmeBlock = { line: i + 1, commands: [] };
    const prompt = fence[1] === 'console' ? /^\$ / : null;
    let current: ReadmeCommand | undefined;
    let outputOf: { command: ReadmeCommand; comment: string } | undefined;
    let quote: Scan['quote'] = null;
    const finishOutput = () => {
      if (outputOf) outputOf.command.shown = shownOutputs(outputOf.comment);
      outputOf = undefined;
    };
    for (i++; i < lines.length && !lines[i]!.startsWith('```'); i++) {
      const raw = lines[i]!;
      if (current) {
        const scan = scanLine(raw, quote);
        // Inside quotes the newline is part of the word; after a backslash it is not.
        current.text += (quote ? '\n' : ' ') + (quote ? scan.text : scan.text.trimStart());
        quote = scan.quote;
        if (!scan.continues) current = undefined;
        continue;
      }
      if (prompt && raw.trim() !== '' && !prompt.test(raw)) {
        // A console block prints what a command answers on the lines without a prompt.
        if (outputOf) outputOf.comment += `\n${raw.trim()}`;
        continue;
      }
      const line = prompt ? raw.replace(prompt, '') : raw;
      if (line.trim() === '') {
        finishOutput();
      } else if (line.trim().startsWith('#')) {
        // A comment right under a command shows its output; one after a blank line describes what follows.
        if (outputOf) outputOf.comment += `\n${line.trim().replace(/^#\s?/, '')}`;
      } else {
        finishOutput();
        const scan = scanLine(line, null);
        current = { text: scan.text, line: i + 1, shown: [] };
        block.commands.push(current);
        outputOf = { command: current, comment: '' };
        quote = scan.quote;
        if (!scan.continues) current = undefined;
      }
    }
    finishOutput();
    blocks.push(block);
  }
  return blocks;
}
