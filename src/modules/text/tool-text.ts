// The text of chat-completions tool calls (their names and arguments): produced tokens the
// upstream bills, counted when it reports no usage.

export function argumentsText(calls: unknown[] | undefined): string {
  let text = '';
  for (const call of calls ?? []) {
    const fn = (call as { function?: { name?: unknown; arguments?: unknown } } | null)?.function;
    if (typeof fn?.name === 'string') text += fn.name;
    if (typeof fn?.arguments === 'string') text += fn.arguments;
  }
  return text;
}
