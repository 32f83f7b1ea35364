// The Node.js cassandra-driver's offline codec (Encoder.decode / Encoder.encode, protocol v4, ES6 Map and
// Set for maps and sets) on the conformance corpus: reads conformance/cases.jsonl on standard input and
// writes, per case, the raw line that conformance/drivers/judge.py takes: "unsupported", or
// "decode_error", or "decoded" and "reencoded" / "reencode_error", and for a case with a value
// "value_encoded" / "value_error": the driver's bytes for the value built from its JSON form.
'use strict';

const readline = require('readline');
const util = require('util');
const cassandra = require('cassandra-driver');

const dataTypes = cassandra.types.dataTypes;
const encoder = new cassandra.Encoder(4, { encoding: { map: Map, set: Set } });
const version = 'cassandra-driver ' + require('cassandra-driver/package.json').version;

/** The driver's column info for a type_tree. */
function columnInfo(tree) {
  if (typeof tree === 'string') {
    const code = dataTypes[tree === 'varchar' ? 'text' : tree];
    if (code === undefined) {
      throw new Error('unknown type ' + tree);
    }
    return { code };
  }
  switch (tree[0]) {
    case 'list':
    case 'set':
      return { code: dataTypes[tree[0]], info: columnInfo(tree[1]) };
    case 'map':
      return { code: dataTypes.map, info: [columnInfo(tree[1]), columnInfo(tree[2])] };
    case 'tuple':
      return { code: dataTypes.tuple, info: tree[1].map(columnInfo) };
    case 'udt':
      return {
        code: dataTypes.udt,
        info: { name: tree[1], keyspace: 'conformance', fields: tree[2].map(([name, t]) => ({ name, type: columnInfo(t) })) },
      };
    case 'vector':
      return { code: dataTypes.custom, customTypeName: 'vector', info: [columnInfo(tree[1]), tree[2]] };
    default:
      throw new Error('unknown type ' + tree[0]);
  }
}

const types = cassandra.types;

/** A double from a corpus float: a number, or "NaN", "Infinity", "-Infinity". */
function float(value) {
  if (typeof value === 'number') {
    return value;
  }
  if (value.startsWith('NaN(')) {
    throw new Error('unsupported: a NaN with other bits');
  }
  return Number(value);
}

/** A BigDecimal from the corpus text (BigDecimal.fromString takes no exponent). */
function decimal(text) {
  const [, sign, whole, fraction = '', exponent = '0'] = /^(-?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text);
  return new types.BigDecimal(types.Integer.fromString(sign + whole + fraction), fraction.length - Number(exponent));
}

/** A corpus line parsed with integers beyond 2^53 kept as text (JSON.parse would round them). */
function parseCase(text) {
  let out = '';
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      out += ch;
      if (ch === '\\') {
        out += text[++i];
      } else if (ch === '"') {
        inString = false;
      }
    } else if (ch === '"') {
      inString = true;
      out += ch;
    } else {
      const atValueStart = /[:[,]\s*$/.test(out.slice(-4));
      const number = atValueStart && /^-?\d+(?![\d.eE])/.exec(text.slice(i, i + 40));
      if (number && number[0].replace('-', '').length >= 16) {
        out += '"' + number[0] + '"';
        i += number[0].length - 1;
      } else {
        out += ch;
      }
    }
  }
  return JSON.parse(out);
}

/** The JavaScript value the driver takes for a corpus JSON value (its documented type mapping). */
function jsValue(tree, value) {
  if (value === null) {
    return null;
  }
  if (typeof value === 'object' && !Array.isArray(value) && value.$empty === true) {
    throw new Error('unsupported: the driver has no way to write the empty value');
  }
  if (typeof tree === 'string') {
    switch (tree) {
      case 'tinyint': case 'smallint': case 'int': return Number(value);
      case 'bigint': case 'counter': return types.Long.fromString(String(value));
      case 'varint': return types.Integer.fromString(value);
      case 'decimal': return decimal(value);
      case 'float': case 'double': return float(value);
      case 'blob': return Buffer.from(value.slice(2), 'hex');
      case 'uuid': return types.Uuid.fromString(value);
      case 'timeuuid': return types.TimeUuid.fromString(value);
      case 'inet': return types.InetAddress.fromString(value);
      case 'timestamp':
        return typeof value === 'number' ? new Date(value) : new Date(value.replace(' ', 'T'));
      case 'date':
        if (typeof value === 'number') {
          throw new Error('unsupported: a date beyond the years of LocalDate.fromString');
        }
        return types.LocalDate.fromString(value);
      case 'time': return types.LocalTime.fromString(value);
      case 'duration': return types.Duration.fromString(value);
      default: return value;
    }
  }
  switch (tree[0]) {
    case 'list':
      return value.map((x) => jsValue(tree[1], x));
    case 'set':
      return new Set(value.map((x) => jsValue(tree[1], x)));
    case 'vector':
      return new types.Vector(value.map((x) => jsValue(tree[1], x)), typeof tree[1] === 'string' ? tree[1] : undefined);
    case 'map':
      return new Map(value.map(([k, x]) => [jsValue(tree[1], k), jsValue(tree[2], x)]));
    case 'tuple':
      return new types.Tuple(...tree[1].map((t, i) => (i < value.length ? jsValue(t, value[i]) : null)));
    default: {
      const out = {};
      for (const [name, t] of tree[2]) {
        out[name] = name in value ? jsValue(t, value[name]) : null;
      }
      return out;
    }
  }
}

function message(error) {
  return (error.name + ': ' + error.message).slice(0, 300);
}

function run(c) {
  const line = { case: c.id, driver: version };
  let info;
  try {
    info = columnInfo(c.type_tree);
  } catch (error) {
    line.unsupported = message(error);
    return line;
  }
  let decoded;
  try {
    decoded = encoder.decode(Buffer.from(c.hex, 'hex'), info);
  } catch (error) {
    line.decode_error = message(error);
    return line;
  }
  line.decoded = util.inspect(decoded, { depth: 4, breakLength: Infinity }).slice(0, 200);
  try {
    const encoded = encoder.encode(decoded, info);
    if (encoded === null || encoded === undefined) {
      line.reencode_error = 'encoded as null (no value)';
    } else {
      line.reencoded = encoded.toString('hex');
    }
  } catch (error) {
    line.reencode_error = message(error);
  }
  if ('value' in c) {
    try {
      const encoded = encoder.encode(jsValue(c.type_tree, c.value), info);
      if (encoded === null || encoded === undefined) {
        line.value_error = 'encoded as null (no value)';
      } else {
        line.value_encoded = encoded.toString('hex');
      }
    } catch (error) {
      line.value_error = error.message.startsWith('unsupported') ? error.message : message(error);
    }
  }
  return line;
}

const fs = require('fs');
readline.createInterface({ input: process.stdin, crlfDelay: Infinity })
  .on('line', (text) => fs.writeSync(1, JSON.stringify(run(parseCase(text))) + '\n'));
