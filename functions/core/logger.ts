import { Logger } from '@aws-lambda-powertools/logger';

// Operational logs (CloudWatch on AWS, stdout locally). Never a secret or a body.
export const logger = new Logger({ serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'gateway' });
