/**
 * A KCL lease table in DynamoDB, through the AWS SDK's DynamoDB client (here with the other AWS requests,
 * though it is not Kinesis: the layers build every AWS request in kinesis/). Only `import --from kcl` and
 * `export --to kcl` load this module (the build makes it a file of its own beside the spout's bundle, which
 * never loads it): the spout's processes carry none of the DynamoDB client.
 */
import {
  CreateTableCommand,
  DeleteItemCommand,
  DescribeTableCommand,
  DynamoDBClient,
  PutItemCommand,
  ScanCommand,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';
import type { AttributeValue as SdkValue } from '@aws-sdk/client-dynamodb';
import { credentialsOf, type KinesisClientOptions } from './client';

/** A DynamoDB item as the SDK's low-level client reads and writes it. */
export type AttributeValue = { S?: string; N?: string; SS?: string[]; BOOL?: boolean; [other: string]: unknown };
export type Item = Record<string, AttributeValue>;

export interface LeaseTable {
  readonly name: string;
  /** Every item; undefined when the table does not exist. */
  scan(): Promise<Item[] | undefined>;
  /** Creates the table as KCL does (hash key leaseKey, on-demand) and waits until it is active. */
  create(): Promise<void>;
  /** Writes `item` if the lease is absent (`expected` undefined) or still holds `expected`'s checkpoint and counter. */
  put(item: Item, expected: Item | undefined): Promise<boolean>;
  /** Removes a lease this run wrote, only if it still is what was written (undoing a partial export). */
  remove(item: Item): Promise<boolean>;
  close(): void;
}

const failedCondition = (err: unknown): boolean =>
  (err as { name?: string })?.name === 'ConditionalCheckFailedException';

/** The condition that an item still holds `expected`'s checkpoint and lease counter (and no owner took it). */
function stillIs(expected: Item): { ConditionExpression: string; ExpressionAttributeValues: Record<string, SdkValue> } {
  const parts = ['checkpoint = :cp', 'leaseCounter = :lc'];
  const values: Record<string, SdkValue> = {
    ':cp': expected.checkpoint as SdkValue,
    ':lc': (expected.leaseCounter ?? { N: '0' }) as SdkValue,
  };
  if (expected.checkpointSubSequenceNumber) {
    parts.push('checkpointSubSequenceNumber = :sub');
    values[':sub'] = expected.checkpointSubSequenceNumber as SdkValue;
  }
  parts.push(expected.leaseOwner ? 'leaseOwner = :owner' : 'attribute_not_exists(leaseOwner)');
  if (expected.leaseOwner) values[':owner'] = expected.leaseOwner as SdkValue;
  return { ConditionExpression: parts.join(' AND '), ExpressionAttributeValues: values };
}

export function openLeaseTable(options: KinesisClientOptions & { table: string; endpoint?: string }): LeaseTable {
  const client = new DynamoDBClient({
    region: options.region,
    endpoint: options.endpoint,
    credentials: credentialsOf(options),
    maxAttempts: 3,
  });
  const TableName = options.table;
  return {
    name: TableName,
    async scan() {
      try {
        await client.send(new DescribeTableCommand({ TableName }));
      } catch (err) {
        if ((err as { name?: string })?.name === 'ResourceNotFoundException') return undefined;
        throw err;
      }
      const items: Item[] = [];
      let ExclusiveStartKey: Record<string, SdkValue> | undefined;
      do {
        // Strongly consistent: a renewal just made must be seen, or a live lease would look idle.
        const page = await client.send(new ScanCommand({ TableName, ExclusiveStartKey, ConsistentRead: true }));
        items.push(...((page.Items ?? []) as Item[]));
        ExclusiveStartKey = page.LastEvaluatedKey;
      } while (ExclusiveStartKey);
      return items;
    },
    async create() {
      await client.send(
        new CreateTableCommand({
          TableName,
          AttributeDefinitions: [{ AttributeName: 'leaseKey', AttributeType: 'S' }],
          KeySchema: [{ AttributeName: 'leaseKey', KeyType: 'HASH' }],
          BillingMode: 'PAY_PER_REQUEST',
        }),
      );
      await waitUntilTableExists({ client, maxWaitTime: 120, minDelay: 1, maxDelay: 5 }, { TableName });
    },
    async put(item, expected) {
      try {
        await client.send(
          new PutItemCommand({
            TableName,
            Item: item as Record<string, SdkValue>,
            ...(expected ? stillIs(expected) : { ConditionExpression: 'attribute_not_exists(leaseKey)' }),
          }),
        );
        return true;
      } catch (err) {
        if (failedCondition(err)) return false;
        throw err;
      }
    },
    async remove(item) {
      try {
        await client.send(
          new DeleteItemCommand({ TableName, Key: { leaseKey: item.leaseKey as SdkValue }, ...stillIs(item) }),
        );
        return true;
      } catch (err) {
        if (failedCondition(err)) return false;
        throw err;
      }
    },
    close: () => client.destroy(),
  };
}
