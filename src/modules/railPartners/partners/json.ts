/** Reading partners' JSON: their answers and callbacks as values, and the objects among them. */
export { isRecord, parseJson } from '../../../domain/json.ts';
