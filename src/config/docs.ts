/** docs/configuration.md's table, made from the schema so the two cannot drift apart (`npm run docs:config`). */
import { configSchema } from './schema';

interface Property {
  type?: string;
  description?: string;
  default?: unknown;
  properties?: Record<string, Property>;
  enum?: readonly unknown[];
}

/** `optionalParent`: the key of an optional object whose required keys are required only when it is given. */
function rows(
  properties: Record<string, Property>,
  required: readonly string[],
  prefix: string,
  optionalParent?: string,
): string[] {
  return Object.entries(properties).flatMap(([key, p]) => {
    if (p.properties) {
      const optional =
        optionalParent ?? (p.default === undefined && !required.includes(key) ? `${prefix}${key}` : undefined);
      return rows(p.properties, (p as { required?: string[] }).required ?? [], `${prefix}${key}.`, optional);
    }
    const needed = optionalParent ? `required with \`${optionalParent}\`` : '**required**';
    const fallback =
      p.default === undefined ? (required.includes(key) ? needed : '—') : `\`${JSON.stringify(p.default)}\``;
    return [`| \`${prefix}${key}\` | ${fallback} | ${(p.description ?? '').replace(/\|/g, '\\|')} |`];
  });
}

export function configTable(): string {
  return [
    '| key | default | meaning |',
    '|---|---|---|',
    ...rows(configSchema.properties as unknown as Record<string, Property>, configSchema.required, ''),
  ].join('\n');
}
