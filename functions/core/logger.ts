import { Logger } from '@aws-lambda-powertools/logger';
import { settings } from './settings';

// Operational logs (CloudWatch on AWS, stdout locally). Never a secret or a body.
export const logger = new Logger({ serviceName: settings().serviceName });
