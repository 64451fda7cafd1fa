/** A JSON object (not an array, not null): what every parsed frame, conf and stored value must be before it is read. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
