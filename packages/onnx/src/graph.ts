/**
 * A small builder of ONNX graphs: nodes get unique output names, constants become initializers (raw data), weights
 * are external-data initializers. Only what the decoder graph uses.
 */
import { attribute, DataType, type AttributeValue, type NodeMessage, type TensorMessage } from './proto.js';

/** A weight stored outside the graph: `length` bytes of float32 at `offset` of file `location` (relative to the graph). */
export interface ExternalWeight {
  readonly location: string;
  readonly offset: number;
  readonly length: number;
}

/** Builds the node list and initializers of one graph. */
export class GraphBuilder {
  readonly nodes: NodeMessage[] = [];
  readonly initializers: TensorMessage[] = [];
  private count = 0;

  /** Adds a node with one output and returns the output's name. */
  op(
    type: string,
    inputs: readonly string[],
    attrs: Readonly<Record<string, AttributeValue>> = {},
    domain?: string,
  ): string {
    return this.opN(type, inputs, 1, attrs, domain)[0]!;
  }

  /** Adds a node with `outputs` outputs and returns their names. */
  opN(
    type: string,
    inputs: readonly string[],
    outputs: number,
    attrs: Readonly<Record<string, AttributeValue>> = {},
    domain?: string,
    names?: readonly string[],
  ): string[] {
    const id = this.count++;
    const out = names
      ? [...names]
      : Array.from({ length: outputs }, (_, i) => `${type.toLowerCase()}_${id}${outputs > 1 ? `_${i}` : ''}`);
    this.nodes.push({
      op_type: type,
      name: `${type}_${id}`,
      input: [...inputs],
      output: out,
      attribute: Object.entries(attrs).map(([k, v]) => attribute(k, v)),
      ...(domain ? { domain } : {}),
    });
    return out;
  }

  /** Adds a node whose single output has the given name (a graph output). */
  opNamed(
    type: string,
    inputs: readonly string[],
    name: string,
    attrs: Readonly<Record<string, AttributeValue>> = {},
  ): string {
    return this.opN(type, inputs, 1, attrs, undefined, [name])[0]!;
  }

  /** A float32 constant. */
  floats(name: string, values: Float32Array | readonly number[], dims: readonly number[]): string {
    const data = values instanceof Float32Array ? values : Float32Array.from(values);
    this.initializers.push({
      name,
      dims: [...dims],
      data_type: DataType.FLOAT,
      raw_data: new Uint8Array(data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength)),
    });
    return name;
  }

  /** An int64 constant (`dims` empty: a scalar). */
  ints(name: string, values: readonly number[], dims: readonly number[] = [values.length]): string {
    const data = BigInt64Array.from(values.map((v) => BigInt(v)));
    this.initializers.push({ name, dims: [...dims], data_type: DataType.INT64, raw_data: new Uint8Array(data.buffer) });
    return name;
  }

  /** A float32 weight stored as external data. */
  external(name: string, dims: readonly number[], w: ExternalWeight): string {
    this.initializers.push({
      name,
      dims: [...dims],
      data_type: DataType.FLOAT,
      data_location: 1,
      external_data: [
        { key: 'location', value: w.location },
        { key: 'offset', value: String(w.offset) },
        { key: 'length', value: String(w.length) },
      ],
    });
    return name;
  }
}
