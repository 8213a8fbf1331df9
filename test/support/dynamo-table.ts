import {
  CreateTableCommand,
  DeleteTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
} from '@aws-sdk/client-dynamodb';

// Test tables in a DynamoDB reached over HTTP (the embedded one's endpoint): key `pk` + `sk`, both strings.

const credentials = async () => ({ accessKeyId: 'AKIDTEST', secretAccessKey: 'secret' });
const client = (endpoint: string) => new DynamoDBClient({ endpoint, region: 'us-east-1', credentials });

/**
 * Creates the table (an existing one is kept), with an index `by-<attribute>` keyed by that string
 * attribute and `sk` when `indexed` names one, and waits until it is active.
 */
export async function createTable(endpoint: string, TableName: string, indexed?: string): Promise<void> {
  const sdk = client(endpoint);
  try {
    await sdk
      .send(
        new CreateTableCommand({
          TableName,
          BillingMode: 'PAY_PER_REQUEST',
          AttributeDefinitions: [
            { AttributeName: 'pk', AttributeType: 'S' },
            { AttributeName: 'sk', AttributeType: 'S' },
            ...(indexed ? [{ AttributeName: indexed, AttributeType: 'S' as const }] : []),
          ],
          KeySchema: [
            { AttributeName: 'pk', KeyType: 'HASH' },
            { AttributeName: 'sk', KeyType: 'RANGE' },
          ],
          GlobalSecondaryIndexes: indexed
            ? [
                {
                  IndexName: `by-${indexed}`,
                  KeySchema: [
                    { AttributeName: indexed, KeyType: 'HASH' },
                    { AttributeName: 'sk', KeyType: 'RANGE' },
                  ],
                  Projection: { ProjectionType: 'ALL' },
                },
              ]
            : undefined,
        }),
      )
      .catch((error: Error) => {
        if (error.name !== 'ResourceInUseException') throw error;
      });
    await untilTable(sdk, TableName, (status) => status === 'ACTIVE');
  } finally {
    sdk.destroy();
  }
}

/** Deletes the table and waits until it is gone. */
export async function deleteTable(endpoint: string, TableName: string): Promise<void> {
  const sdk = client(endpoint);
  try {
    await sdk.send(new DeleteTableCommand({ TableName }));
    await untilTable(sdk, TableName, (status) => status === undefined);
  } finally {
    sdk.destroy();
  }
}

/** Waits until the table's status satisfies `done` (undefined: the table is gone). */
async function untilTable(
  sdk: DynamoDBClient,
  TableName: string,
  done: (status: string | undefined) => boolean,
): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const status = await sdk
      .send(new DescribeTableCommand({ TableName }))
      .then((out) => out.Table?.TableStatus as string | undefined)
      .catch((error: Error) => {
        if (error.name === 'ResourceNotFoundException') return undefined;
        throw error;
      });
    if (done(status)) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`table ${TableName} never reached the status waited for`);
}
