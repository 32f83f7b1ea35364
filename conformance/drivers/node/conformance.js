// The Node.js cassandra-driver's offline codec (Encoder.decode / Encoder.encode, protocol v4, ES6 Map and
// Set for maps and sets) on the conformance corpus: reads conformance/cases.jsonl on standard input and
// writes, per case, the raw line that conformance/drivers/judge.py takes: "unsupported", or
// "decode_error", or "decoded" and "reencoded" / "reencode_error".
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
  return line;
}

const fs = require('fs');
readline.createInterface({ input: process.stdin, crlfDelay: Infinity })
  .on('line', (text) => fs.writeSync(1, JSON.stringify(run(JSON.parse(text))) + '\n'));
