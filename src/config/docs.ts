/** The README's configuration table, made from the schema so the two cannot drift apart. */
import { configSchema } from './schema';

interface Property {
  type?: string;
  description?: string;
  default?: unknown;
  properties?: Record<string, Property>;
  enum?: readonly unknown[];
}

function rows(properties: Record<string, Property>, required: readonly string[], prefix: string): string[] {
  return Object.entries(properties).flatMap(([key, p]) => {
    if (p.properties) return rows(p.properties, (p as { required?: string[] }).required ?? [], `${prefix}${key}.`);
    const fallback = p.default === undefined ? (required.includes(key) ? '**required**' : '—') : `\`${JSON.stringify(p.default)}\``;
    return [`| \`${prefix}${key}\` | ${fallback} | ${(p.description ?? '').replace(/\|/g, '\\|')} |`];
  });
}

export function configTable(): string {
  return ['| key | default | meaning |', '|---|---|---|', ...rows(configSchema.properties as unknown as Record<string, Property>, configSchema.required, '')].join('\n');
}
