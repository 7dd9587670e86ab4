#!/bin/sh
# test_checkpoints.sh GRADFLOW CASE — checkpoints read as what they are (issue 60 items 5, 7, 8, 20, 21, 22): a RoPE
# setting Transformers 4 and 5 read differently, or given as Transformers 5's rope_parameters, is refused or read,
# never analyzed as plain RoPE; step numbers are never cut; a folder of checkpoints drops nothing silently; a
# config.json that disagrees with the tensors, and a tensor it does not give, are blamed on it by name; a link loop
# is named as one. Exit 0 pass, 1 fail.
gf=${1:?usage: test_checkpoints.sh GRADFLOW CASE}
case_=${2:?usage: test_checkpoints.sh GRADFLOW CASE}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
ck="$tmp/ck"
"$gf" export --format hf-llama --arch llama --layers 2 --d-model 16 --heads 4 --kv-heads 2 --out "$ck" -q > /dev/null 2>&1 \
  || fail "export of the test checkpoint exited $?"
config() {  # config KEY=JSON...: config.json with these keys set (null removes one)
  /usr/bin/python3 - "$ck/config.json" "$@" <<'PY'
import json, sys
p = sys.argv[1]; c = json.load(open(p))
for kv in sys.argv[2:]:
    k, v = kv.split("=", 1); v = json.loads(v)
    if v is None: c.pop(k, None)
    else: c[k] = v
json.dump(c, open(p, "w"))
PY
}
analyze() { "$gf" analyze --weights "$1" --seq-len 4 -q --json "$tmp/r.json" > /dev/null 2> "$tmp/err"; }
refused() {  # refused WORDS WEIGHTS: exit 2, one line holding WORDS
  analyze "$2"
  rc=$?
  [ $rc -eq 2 ] || fail "analyze exited $rc (want 2): $(cat "$tmp/err")"
  [ "$(wc -l < "$tmp/err")" -eq 1 ] || fail "not one line: $(cat "$tmp/err")"
  grep -q -- "$1" "$tmp/err" || fail "the message does not say '$1': $(cat "$tmp/err")"
  echo "ok: $(cat "$tmp/err")"
}
case $case_ in
  rope)  # item 5
    cp "$ck/config.json" "$tmp/keep.json"
    config 'rope_scaling={"rope_type": "linear", "type": "default", "factor": 4}'
    refused "read differently" "$ck"
    cp "$tmp/keep.json" "$ck/config.json"
    config 'rope_theta=null' 'rope_parameters={"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0}'
    refused "\"rope_parameters\" has type 'llama3'" "$ck"
    config 'rope_parameters={"rope_type": "default", "rope_theta": 500000.0}'
    analyze "$ck" || fail "a Transformers 5 config with plain RoPE exited $?: $(cat "$tmp/err")"
    /usr/bin/python3 -c "import json,sys; t=json.load(open(sys.argv[1]))['config']['rope_theta']; sys.exit(0 if t == 500000 else print('rope_theta', t) or 1)" \
      "$tmp/r.json" || fail "rope_parameters' theta was not read"
    echo "ok: rope_parameters' theta 500000 read" ;;
  steps)  # items 7, 8: a folder of step-named checkpoint folders
    mkdir "$tmp/run"
    cp -r "$ck" "$tmp/run/step_99999999999999999999"
    cp -r "$ck" "$tmp/run/step_00001"
    over() { "$gf" analyze --weights "$tmp/run" --seq-len 4 -q --json "$tmp/o.json" > /dev/null 2> "$tmp/err"; }
    over
    [ $? -eq 2 ] && grep -q "has 20 digits" "$tmp/err" || fail "a 20-digit step: $(cat "$tmp/err")"
    rm -r "$tmp/run/step_99999999999999999999"
    ln -s step_00500 "$tmp/run/step_00500"  # a loop
    over
    [ $? -eq 2 ] && grep -q "symbolic link loop" "$tmp/err" || fail "a looping step link: $(cat "$tmp/err")"
    rm "$tmp/run/step_00500"
    ln -s .. "$tmp/run/step400"
    over
    [ $? -eq 2 ] && grep -q "not a checkpoint folder" "$tmp/err" || fail "step400 -> ..: $(cat "$tmp/err")"
    rm "$tmp/run/step400"
    # one checkpoint left in the folder: still an over-training report, which plot draws
    over || fail "a folder of one checkpoint exited $?: $(cat "$tmp/err")"
    grep -q '"over_training"' "$tmp/o.json" || fail "a folder of one checkpoint gave no over-training report"
    echo "ok: 20-digit steps, link loops and step400 -> .. refused; one checkpoint is over training" ;;
  config_blamed)  # items 20, 21
    cp "$ck/config.json" "$tmp/keep.json"
    config 'num_key_value_heads=4'
    refused "config.json '$ck/config.json' says num_attention_heads = 4, num_key_value_heads = 4" "$ck"
    grep -q -- "--kv-heads" "$tmp/err" && fail "blames --kv-heads, which was not given"
    cp "$tmp/keep.json" "$ck/config.json"
    config 'head_dim=1099511627776'
    refused "head_dim = 1099511627776" "$ck"
    grep -q -- "--layers or --seq-len" "$tmp/err" && fail "blames --layers/--seq-len"
    cp "$tmp/keep.json" "$ck/config.json"
    config 'model_type="qwen2"'
    refused "check config.json's model_type" "$ck"
    grep -q "nn.TransformerEncoder" "$tmp/err" && fail "tells a Llama user to save an nn.TransformerEncoder"
    cp "$tmp/keep.json" "$ck/config.json"
    # a tensor the config does not give: q_norm on a Llama, and a lone q_proj.bias
    /usr/bin/python3 - "$ck/model.safetensors" "$tmp/extra.safetensors" <<'PY'
import json, struct, sys
raw = open(sys.argv[1], "rb").read(); n = struct.unpack("<Q", raw[:8])[0]
head = json.loads(raw[8:8 + n]); data = raw[8 + n:]
for name, shape in (("model.layers.0.self_attn.q_norm.weight", [4]),):
    head[name] = {"dtype": "F64", "shape": shape, "data_offsets": [len(data), len(data) + 8 * shape[0]]}
    data += struct.pack("<%dd" % shape[0], *([1.0] * shape[0]))
h = json.dumps(head).encode(); h += b" " * ((8 - len(h) % 8) % 8)
open(sys.argv[2], "wb").write(struct.pack("<Q", len(h)) + h + data)
PY
    cp "$ck/model.safetensors" "$tmp/model.keep"
    cp "$tmp/extra.safetensors" "$ck/model.safetensors"
    refused "tensor 'model.layers.0.self_attn.q_norm.weight' has no place" "$ck"
    cp "$tmp/model.keep" "$ck/model.safetensors"
    echo "ok: config.json blamed by name; a tensor it does not give refused naming the file's tensor" ;;
  link_loop)  # item 22
    mv "$ck/config.json" "$tmp/config.json"
    ln -s config.json "$ck/config.json"
    refused "config.json': is a symbolic link loop" "$ck"
    rm "$ck/config.json"
    ln -s "$tmp/gone.json" "$ck/config.json"
    refused "is a symbolic link to nothing" "$ck"
    echo "ok: link loops and dangling links named" ;;
  warning_path)  # item 23: a warning names a path with a newline on one line (as \x0A)
    nl='
'
    w="$tmp/a${nl}b.safetensors"
    "$gf" export --placement pre --layers 1 --d-model 8 --heads 2 --out "$w" -q > /dev/null 2>&1 || fail "export exited $?"
    /usr/bin/python3 - "$w" <<'PY'
import json, struct, sys
p = sys.argv[1]; raw = open(p, "rb").read(); n = struct.unpack("<Q", raw[:8])[0]
head = json.loads(raw[8:8 + n]); data = raw[8 + n:]
head["decoder.bias"] = {"dtype": "F64", "shape": [1], "data_offsets": [len(data), len(data) + 8]}
data += struct.pack("<d", 1.0)
h = json.dumps(head).encode(); h += b" " * ((8 - len(h) % 8) % 8)
open(p, "wb").write(struct.pack("<Q", len(h)) + h + data)
PY
    "$gf" analyze --weights "$w" --heads 2 --placement pre -q > /dev/null 2> "$tmp/err" || fail "analyze exited $?"
    [ "$(wc -l < "$tmp/err")" -eq 1 ] || fail "the warning is not one line: $(cat "$tmp/err")"
    grep -q 'a\\x0Ab.safetensors' "$tmp/err" || fail "the path is not written as a\\x0Ab: $(cat "$tmp/err")"
    echo "ok: $(cat "$tmp/err")" ;;
  *) fail "unknown case $case_" ;;
esac
