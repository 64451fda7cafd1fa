/** Just enough Markdown to check a manual's links: headings as GitHub anchors them, and relative links. */

const blank = (s: string) => s.replace(/[^\n]/g, ' ');

/** Fenced code blocks blanked out (lines kept), so that a `#` comment in one is no heading. */
export function withoutFences(text: string): string {
  return text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, blank);
}

/** Fenced code blocks and inline code spans blanked out, so that nothing inside them is read as a link. */
export function withoutCode(text: string): string {
  return withoutFences(text).replace(/(`+)[^`\n][\s\S]*?\1/g, blank);
}

/**
 * GitHub's anchor for a heading (github-slugger): the heading's text as rendered (no code ticks, emphasis
 * marks or link targets), lower-cased, every character that is not a letter, a digit, `_`, `-` or a space
 * dropped, each space made a `-`.
 */
export function slug(heading: string): string {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/[`*]/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor a page has: its headings' slugs, a repeated one numbered `-1`, `-2`... as GitHub does. */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const line of withoutFences(text).split('\n')) {
    const heading = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const base = slug(heading[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

export interface Link {
  line: number;
  target: string;
}

/** The page's inline links and images that stay in the repository (not `http:`, `https:` or `mailto:`). */
export function relativeLinks(text: string): Link[] {
  const plain = withoutCode(text);
  const links: Link[] = [];
  for (const m of plain.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    const target = m[1];
    if (/^(https?:|mailto:)/i.test(target)) continue;
    links.push({ line: plain.slice(0, m.index).split('\n').length, target });
  }
  return links;
}
