/**
 * A minimal Parquet writer for test fixtures (hyparquet has no writer here and no pyarrow is installed): one row
 * group, one uncompressed PLAIN data page per column, REQUIRED columns of UTF-8 strings (BYTE_ARRAY) or INT64.
 * The metadata is Thrift compact protocol, as the format specifies.
 */

type Column = {
  readonly name: string;
  readonly type: 'string' | 'int64';
  readonly values: readonly (string | bigint)[];
};

/** Thrift compact protocol writer (only what Parquet metadata needs). */
class Compact {
  private readonly bytes: number[] = [];
  private readonly lastIds: number[] = [0];

  varint(n: bigint): void {
    let v = n;
    do {
      let b = Number(v & 0x7fn);
      v >>= 7n;
      if (v > 0n) b |= 0x80;
      this.bytes.push(b);
    } while (v > 0n);
  }
  zigzag(n: bigint): void {
    this.varint(n >= 0n ? n << 1n : (-n << 1n) - 1n);
  }
  header(id: number, type: number): void {
    const last = this.lastIds[this.lastIds.length - 1]!;
    const delta = id - last;
    if (delta > 0 && delta <= 15) this.bytes.push((delta << 4) | type);
    else {
      this.bytes.push(type);
      this.zigzag(BigInt(id));
    }
    this.lastIds[this.lastIds.length - 1] = id;
  }
  i32(id: number, v: number): void {
    this.header(id, 5);
    this.zigzag(BigInt(v));
  }
  i64(id: number, v: number | bigint): void {
    this.header(id, 6);
    this.zigzag(BigInt(v));
  }
  binary(id: number, v: string): void {
    this.header(id, 8);
    const b = Buffer.from(v, 'utf8');
    this.varint(BigInt(b.length));
    this.bytes.push(...b);
  }
  beginStruct(id: number): void {
    this.header(id, 12);
    this.lastIds.push(0);
  }
  endStruct(): void {
    this.bytes.push(0);
    this.lastIds.pop();
  }
  list(id: number, elemType: number, size: number): void {
    this.header(id, 9);
    if (size < 15) this.bytes.push((size << 4) | elemType);
    else {
      this.bytes.push(0xf0 | elemType);
      this.varint(BigInt(size));
    }
  }
  listI32(v: number): void {
    this.zigzag(BigInt(v));
  }
  listBinary(v: string): void {
    const b = Buffer.from(v, 'utf8');
    this.varint(BigInt(b.length));
    this.bytes.push(...b);
  }
  beginListStruct(): void {
    this.lastIds.push(0);
  }
  stop(): void {
    this.bytes.push(0);
  }
  toBuffer(): Buffer {
    return Buffer.from(this.bytes);
  }
}

/** PLAIN encoding of a column's values. */
function plain(column: Column): Buffer {
  const parts: Buffer[] = [];
  for (const v of column.values) {
    if (column.type === 'int64') {
      const b = Buffer.alloc(8);
      b.writeBigInt64LE(BigInt(v));
      parts.push(b);
    } else {
      const s = Buffer.from(String(v), 'utf8');
      const len = Buffer.alloc(4);
      len.writeUInt32LE(s.length);
      parts.push(len, s);
    }
  }
  return Buffer.concat(parts);
}

/** Builds a Parquet file holding `columns` (all the same length). */
export function writeParquet(columns: readonly Column[]): Buffer {
  const rows = columns[0]?.values.length ?? 0;
  const chunks: Buffer[] = [Buffer.from('PAR1')];
  let offset = 4;
  const metas: { column: Column; offset: number; size: number }[] = [];
  for (const column of columns) {
    const data = plain(column);
    const header = new Compact();
    header.i32(1, 0); // type DATA_PAGE
    header.i32(2, data.length);
    header.i32(3, data.length);
    header.beginStruct(5); // DataPageHeader
    header.i32(1, rows);
    header.i32(2, 0); // PLAIN
    header.i32(3, 3); // RLE
    header.i32(4, 3);
    header.endStruct();
    header.stop();
    const page = Buffer.concat([header.toBuffer(), data]);
    metas.push({ column, offset, size: page.length });
    chunks.push(page);
    offset += page.length;
  }
  const meta = new Compact();
  meta.i32(1, 1); // version
  meta.list(2, 12, columns.length + 1); // schema
  meta.beginListStruct();
  meta.binary(4, 'schema');
  meta.i32(5, columns.length);
  meta.endStruct();
  for (const column of columns) {
    meta.beginListStruct();
    meta.i32(1, column.type === 'int64' ? 2 : 6); // INT64 / BYTE_ARRAY
    meta.i32(3, 0); // REQUIRED
    meta.binary(4, column.name);
    if (column.type === 'string') meta.i32(6, 0); // UTF8
    meta.endStruct();
  }
  meta.i64(3, rows);
  meta.list(4, 12, 1); // row_groups
  meta.beginListStruct();
  meta.list(1, 12, columns.length); // columns
  for (const { column, offset: at, size } of metas) {
    meta.beginListStruct();
    meta.i64(2, at); // file_offset
    meta.beginStruct(3); // ColumnMetaData
    meta.i32(1, column.type === 'int64' ? 2 : 6);
    meta.list(2, 5, 1);
    meta.listI32(0); // encodings [PLAIN]
    meta.list(3, 8, 1);
    meta.listBinary(column.name); // path_in_schema
    meta.i32(4, 0); // UNCOMPRESSED
    meta.i64(5, rows);
    meta.i64(6, size);
    meta.i64(7, size);
    meta.i64(9, at); // data_page_offset
    meta.endStruct();
    meta.endStruct();
  }
  meta.i64(
    2,
    metas.reduce((s, m) => s + m.size, 0),
  ); // total_byte_size
  meta.i64(3, rows);
  meta.endStruct();
  meta.stop();
  const metaBytes = meta.toBuffer();
  const len = Buffer.alloc(4);
  len.writeUInt32LE(metaBytes.length);
  chunks.push(metaBytes, len, Buffer.from('PAR1'));
  return Buffer.concat(chunks);
}
