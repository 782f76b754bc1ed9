/**
 * The part of ONNX's protobuf schema (onnx.proto, IR version 8) a decoder graph needs, with the field numbers of the
 * official schema, encoded with protobufjs. Weights never pass through here: initializers are external data (file,
 * offset, length), so the encoded graph stays a few hundred kilobytes at any model size.
 */
import protobuf from 'protobufjs';

const SCHEMA = `
syntax = "proto2";
package onnx;
message AttributeProto {
  enum AttributeType { UNDEFINED = 0; FLOAT = 1; INT = 2; STRING = 3; TENSOR = 4; GRAPH = 5; FLOATS = 6; INTS = 7; STRINGS = 8; }
  optional string name = 1;
  optional AttributeType type = 20;
  optional float f = 2;
  optional int64 i = 3;
  optional bytes s = 4;
  optional TensorProto t = 5;
  repeated float floats = 7;
  repeated int64 ints = 8;
  repeated bytes strings = 9;
}
message ValueInfoProto {
  optional string name = 1;
  optional TypeProto type = 2;
}
message NodeProto {
  repeated string input = 1;
  repeated string output = 2;
  optional string name = 3;
  optional string op_type = 4;
  optional string domain = 7;
  repeated AttributeProto attribute = 5;
}
message ModelProto {
  optional int64 ir_version = 1;
  repeated OperatorSetIdProto opset_import = 8;
  optional string producer_name = 2;
  optional string producer_version = 3;
  optional string doc_string = 6;
  optional GraphProto graph = 7;
  repeated StringStringEntryProto metadata_props = 14;
}
message StringStringEntryProto {
  optional string key = 1;
  optional string value = 2;
}
message GraphProto {
  repeated NodeProto node = 1;
  optional string name = 2;
  repeated TensorProto initializer = 5;
  repeated ValueInfoProto input = 11;
  repeated ValueInfoProto output = 12;
}
message TensorProto {
  enum DataLocation { DEFAULT = 0; EXTERNAL = 1; }
  repeated int64 dims = 1;
  optional int32 data_type = 2;
  optional string name = 8;
  optional bytes raw_data = 9;
  repeated StringStringEntryProto external_data = 13;
  optional DataLocation data_location = 14;
}
message TensorShapeProto {
  message Dimension {
    oneof value {
      int64 dim_value = 1;
      string dim_param = 2;
    }
  }
  repeated Dimension dim = 1;
}
message TypeProto {
  message Tensor {
    optional int32 elem_type = 1;
    optional TensorShapeProto shape = 2;
  }
  oneof value {
    Tensor tensor_type = 1;
  }
}
message OperatorSetIdProto {
  optional string domain = 1;
  optional int64 version = 2;
}
`;

/** ONNX element types used here (TensorProto.DataType). */
export const DataType = { FLOAT: 1, INT64: 7, BOOL: 9 } as const;

/** An attribute value: a float (`{ f }`), an int, ints, or a tensor. */
export type AttributeValue =
  | { readonly f: number }
  | { readonly i: number }
  | { readonly ints: readonly number[] }
  | { readonly t: TensorMessage }
  | { readonly s: string };

/** A TensorProto, as plain data. */
export interface TensorMessage {
  readonly name?: string;
  readonly dims: readonly number[];
  readonly data_type: number;
  readonly raw_data?: Uint8Array;
  readonly external_data?: readonly { readonly key: string; readonly value: string }[];
  readonly data_location?: number;
}

/** A NodeProto, as plain data. */
export interface NodeMessage {
  readonly op_type: string;
  readonly domain?: string;
  readonly name: string;
  readonly input: readonly string[];
  readonly output: readonly string[];
  readonly attribute: readonly Record<string, unknown>[];
}

/** A graph input or output: its name, element type and dims (a number, or a symbolic name). */
export interface ValueInfo {
  readonly name: string;
  readonly elemType: number;
  readonly dims: readonly (number | string)[];
}

/** A whole model, as plain data. */
export interface ModelMessage {
  readonly opsets: readonly { readonly domain: string; readonly version: number }[];
  readonly nodes: readonly NodeMessage[];
  readonly initializers: readonly TensorMessage[];
  readonly inputs: readonly ValueInfo[];
  readonly outputs: readonly ValueInfo[];
  readonly metadata: Readonly<Record<string, string>>;
  readonly producerVersion: string;
}

let modelType: protobuf.Type | undefined;

/** An attribute as an AttributeProto object. */
export function attribute(name: string, v: AttributeValue): Record<string, unknown> {
  if ('f' in v) return { name, type: 1, f: v.f };
  if ('i' in v) return { name, type: 2, i: v.i };
  if ('s' in v) return { name, type: 3, s: new TextEncoder().encode(v.s) };
  if ('t' in v) return { name, type: 4, t: v.t };
  return { name, type: 7, ints: [...v.ints] };
}

function valueInfo(v: ValueInfo): Record<string, unknown> {
  const dim = v.dims.map((d) => (typeof d === 'number' ? { dim_value: d } : { dim_param: d }));
  return { name: v.name, type: { tensor_type: { elem_type: v.elemType, shape: { dim } } } };
}

/** Encodes a model as ONNX ModelProto bytes (IR version 8). */
export function encodeModel(m: ModelMessage): Uint8Array {
  modelType ??= protobuf.parse(SCHEMA, { keepCase: true }).root.lookupType('onnx.ModelProto');
  const obj = {
    ir_version: 8,
    producer_name: 'troupe',
    producer_version: m.producerVersion,
    opset_import: m.opsets.map((o) => ({ domain: o.domain, version: o.version })),
    metadata_props: Object.entries(m.metadata).map(([key, value]) => ({ key, value })),
    graph: {
      name: 'decoder',
      node: m.nodes,
      initializer: m.initializers,
      input: m.inputs.map(valueInfo),
      output: m.outputs.map(valueInfo),
    },
  };
  return modelType.encode(modelType.fromObject(obj)).finish();
}
