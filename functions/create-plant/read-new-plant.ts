/**
 * Turning a REST proxy event into a NewPlant, in the contract's order of checks:
 * content type (40003) → size (40004) → JSON (40001) → schema (40002).
 */
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { readJsonBody } from '../shared/http/json-body.ts';
import { type NewPlant, parseNewPlant } from './new-plant.ts';

/** The NewPlant of a `POST /plants` request. @throws ApiError 40003, 40004, 40001 or 40002 */
export function readNewPlant(event: APIGatewayProxyEvent): NewPlant {
  return parseNewPlant(readJsonBody(event));
}
