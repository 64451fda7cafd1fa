/**
 * The generated parts of the manual (docs/configuration.md's table, docs/benchmarks.md's figures) sit between
 * two marker comments; everything around them is written by hand and left as it is.
 */
export function replaceBetween(text: string, name: string, body: string, file: string): string {
  const start = `<!-- ${name}:start -->`;
  const end = `<!-- ${name}:end -->`;
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  if (from < 0 || to < from || text.indexOf(start, from + 1) >= 0 || text.indexOf(end, to + 1) >= 0)
    throw new Error(`${file}: needs exactly one ${start} followed by one ${end}; nothing written`);
  return `${text.slice(0, from)}${start}\n${body}\n${end}${text.slice(to + end.length)}`;
}

/** The text between the markers (trimmed), or undefined when they are missing. */
export function textBetween(text: string, name: string): string | undefined {
  return text.split(`<!-- ${name}:start -->`)[1]?.split(`<!-- ${name}:end -->`)[0]?.trim();
}
