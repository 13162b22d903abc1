/** Lambda entry of `POST /plants`, configured once, at cold start. */
import { plantsFunctionDependencies } from '../shared/plants/plants-function.ts';
import { createHandler } from './create-handler.ts';

export const handler = createHandler(plantsFunctionDependencies('create-plant'));
