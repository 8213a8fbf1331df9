import type { MiddlewareObj, Request } from '@middy/core';
import type { GatewayContext, HttpEvent, HttpResult } from '../core/http';

export type GatewayRequest = Request<HttpEvent, HttpResult, Error, GatewayContext>;
export type GatewayMiddleware = MiddlewareObj<HttpEvent, HttpResult, Error, GatewayContext>;
