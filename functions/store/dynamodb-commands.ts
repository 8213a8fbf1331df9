import type { UpdateItemCommandInput } from '@aws-sdk/client-dynamodb';
import type {
  BatchGetCommandInput,
  BatchWriteCommandInput,
  DeleteCommandInput,
  GetCommandInput,
  PutCommandInput,
  QueryCommandInput,
  ScanCommandInput,
  UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';

// What Lambda bundles get for `@aws-sdk/lib-dynamodb` and `@aws-sdk/client-dynamodb` (lib/bundling.ts ALIASES): the stores build these
// commands and ./dynamodb-http.ts sends them, so the SDK's client never enters a function bundle. Locally
// and in tests the stores build the SDK's own classes, which the same client sends.

export class GetCommand {
  constructor(readonly input: GetCommandInput) {}
}
export class PutCommand {
  constructor(readonly input: PutCommandInput) {}
}
export class UpdateCommand {
  constructor(readonly input: UpdateCommandInput) {}
}
export class DeleteCommand {
  constructor(readonly input: DeleteCommandInput) {}
}
export class QueryCommand {
  constructor(readonly input: QueryCommandInput) {}
}
export class ScanCommand {
  constructor(readonly input: ScanCommandInput) {}
}
export class BatchGetCommand {
  constructor(readonly input: BatchGetCommandInput) {}
}
export class BatchWriteCommand {
  constructor(readonly input: BatchWriteCommandInput) {}
}
export class UpdateItemCommand {
  constructor(readonly input: UpdateItemCommandInput) {}
}
