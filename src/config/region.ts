/**
 * What a region name looks like, checked when the configuration is built (a typo such as `us-east1` would
 * otherwise fail every call, seconds later, as if the network were down), and the regions this version
 * knows, for a warning at start about a well-formed name that may still be wrong.
 */

/** Words of letters and a number, joined by dashes: `us-east-1`, `us-gov-west-1`, `eusc-de-east-1`. */
export const REGION_PATTERN = '^[a-z]+(-[a-z]+)+-[0-9]+$';

/** Said of a region that does not have that shape; the Java builder says the same (ConfigSchema.REGION_SHAPE). */
export const REGION_SHAPE =
  'must be an AWS region name: words and a number joined by dashes, such as "us-east-1", "eu-central-2" or "us-gov-west-1"';

/** The regions AWS listed when this was written; a newer one is only warned about. */
export const KNOWN_REGIONS: ReadonlySet<string> = new Set([
  'af-south-1',
  'ap-east-1',
  'ap-east-2',
  'ap-northeast-1',
  'ap-northeast-2',
  'ap-northeast-3',
  'ap-south-1',
  'ap-south-2',
  'ap-southeast-1',
  'ap-southeast-2',
  'ap-southeast-3',
  'ap-southeast-4',
  'ap-southeast-5',
  'ap-southeast-6',
  'ap-southeast-7',
  'ca-central-1',
  'ca-west-1',
  'cn-north-1',
  'cn-northwest-1',
  'eu-central-1',
  'eu-central-2',
  'eu-north-1',
  'eu-south-1',
  'eu-south-2',
  'eu-west-1',
  'eu-west-2',
  'eu-west-3',
  'eusc-de-east-1',
  'il-central-1',
  'me-central-1',
  'me-south-1',
  'mx-central-1',
  'sa-east-1',
  'us-east-1',
  'us-east-2',
  'us-gov-east-1',
  'us-gov-west-1',
  'us-iso-east-1',
  'us-iso-west-1',
  'us-isob-east-1',
  'us-isof-east-1',
  'us-isof-south-1',
  'eu-isoe-west-1',
  'us-west-1',
  'us-west-2',
]);

/** The warning for a well-formed region this version does not know, or undefined. */
export function unknownRegionWarning(key: string, region: string): string | undefined {
  if (KNOWN_REGIONS.has(region)) return undefined;
  return (
    `WARNING: ${key} = "${region}" is not a region this version knows: if it is a new region, ignore this; ` +
    'if not, correct it (every call to Kinesis in a wrong region fails, and is reported as if the network were down)'
  );
}
