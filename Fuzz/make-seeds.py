#!/usr/bin/env python3
"""Writes the small seed corpora of the fuzz targets under Fuzz/corpus/<target>/ (run once; the files are committed).

Each seed is a well-formed example of what the parser receives, plus the inputs that once crashed Chorus (named
crash-*), so replaying the corpus in the tests keeps them fixed."""
import base64, json, os, struct, sys

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def put(target, name, data):
    folder = os.path.join(root, target)
    os.makedirs(folder, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)


def wav(samples=8, rate=8000, channels=1):
    data = struct.pack("<%dh" % (samples * channels), *([1000, -1000] * (samples * channels // 2)))
    fmt = struct.pack("<HHIIHH", 1, channels, rate, rate * 2 * channels, 2 * channels, 16)
    body = b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt + b"data" + struct.pack("<I", len(data)) + data
    return b"RIFF" + struct.pack("<I", len(body)) + body


def box(kind, payload):
    return struct.pack(">I", 8 + len(payload)) + kind + payload


def m4a():
    ftyp = box(b"ftyp", b"M4A " + struct.pack(">I", 0) + b"M4A isom")
    mvhd = box(b"mvhd", bytes(4) + bytes(8) + struct.pack(">II", 44100, 44100 * 3) + bytes(80))
    hdlr = box(b"hdlr", bytes(8) + b"soun" + bytes(12))
    entry = box(b"mp4a", bytes(8) + bytes(8) + struct.pack(">HH", 2, 16) + bytes(4) + struct.pack(">I", 44100 << 16))
    stsd = box(b"stsd", bytes(8) + entry)
    trak = box(b"trak", box(b"mdia", hdlr + box(b"minf", box(b"stbl", stsd))))
    return ftyp + box(b"moov", mvhd + trak)


def mp3(frames=3):
    header = bytes([0xFF, 0xFB, 0x90, 0x64])  # MPEG-1 Layer III, 128 kbit/s, 44.1 kHz
    length = 144 * 128000 // 44100
    return b"ID3\x03\x00\x00\x00\x00\x00\x00" + (header + bytes(length - 4)) * frames


# Audio containers, and the 48-byte M4A whose 64-bit box size overflowed the box walk (issue 16).
put("audio-container", "wav", wav())
put("audio-container", "m4a", m4a())
put("audio-container", "mp3", mp3())
crash = box(b"ftyp", b"M4A " + bytes(4) + b"isom") + struct.pack(">I", 1) + b"mdat" + struct.pack(">Q", 0x7FFFFFFFFFFFFFFF)
crash += bytes(48 - len(crash))
put("audio-container", "crash-m4a-64bit-box-size", crash)
put("wav-splice", "wav", wav())
put("wav-splice", "wav-stereo", wav(samples=8, rate=16000, channels=2))

# Range headers: eight bytes of size, then the header; the first crashed the audio routes (issue 16).
size = struct.pack(">q", 1000)
put("byte-range", "crash-range-int64-max", size + b"bytes=0-9223372036854775807")
put("byte-range", "suffix", size + b"bytes=-100")
put("byte-range", "open", size + b"bytes=10-")
put("byte-range", "closed", size + b"bytes=0-99")

for name, text in [("seconds", "2"), ("fraction", "0.5"), ("crash-huge", "1e300"), ("negative", "-1"), ("nan", "nan")]:
    put("retry-after", name, text)

put("form-urlencoded", "twilio-status",
    "AccountSid=AC123&CallSid=CA123&CallStatus=completed&CallDuration=8&From=%2B15005550006&To=%2B15551234567&Caller=a+b")
put("form-urlencoded", "bad-escapes", "a=%zz&b=%&c==&&d")

boundary = "----chorus"
form = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nwhisper-1\r\n"
        f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.wav\"\r\nContent-Type: audio/wav\r\n\r\n").encode()
form += wav() + f"\r\n--{boundary}--\r\n".encode()
put("multipart", "transcription", f"multipart/form-data; boundary={boundary}\n".encode() + form)
put("multipart", "quoted-boundary", b"multipart/form-data; boundary=\"a b\"\n--a b\r\nContent-Disposition: form-data; name=\"x\"\r\n\r\n1\r\n--a b--")

payload = base64.b64encode(bytes(160)).decode()
twilio = {
    "connected": {"event": "connected", "protocol": "Call", "version": "1.0.0"},
    "start": {"event": "start", "sequenceNumber": "1", "streamSid": "MZ1", "start": {"accountSid": "AC1", "streamSid": "MZ1",
              "callSid": "CA1", "tracks": ["inbound"], "mediaFormat": {"encoding": "audio/x-mulaw", "sampleRate": 8000, "channels": 1},
              "customParameters": {"call_id": "1"}}},
    "media": {"event": "media", "sequenceNumber": "3", "media": {"track": "inbound", "chunk": "1", "timestamp": "5", "payload": payload},
              "streamSid": "MZ1"},
    "mark": {"event": "mark", "sequenceNumber": "4", "streamSid": "MZ1", "mark": {"name": "m1"}},
    "dtmf": {"event": "dtmf", "streamSid": "MZ1", "sequenceNumber": "5", "dtmf": {"track": "inbound_track", "digit": "1"}},
    "stop": {"event": "stop", "sequenceNumber": "6", "streamSid": "MZ1", "stop": {"accountSid": "AC1", "callSid": "CA1"}},
}
for name, message in twilio.items():
    put("twilio-media-frame", name, json.dumps(message))
    put("json-member-scanner", "twilio-" + name, json.dumps(message))
put("twilio-media-frame", "huge-timestamp", json.dumps({"event": "media", "media": {"timestamp": "99999999999999999999999", "payload": "AA=="}}))
put("json-member-scanner", "nested-escapes", '{"a":{"b":[1,2,{"c":"\\u00e9\\"x"}]},"d":-1.5e10,"e":true,"f":null}')

realtime = {
    "delta": {"type": "response.output_audio.delta", "event_id": "e1", "response_id": "r1", "item_id": "i1", "output_index": 0,
              "content_index": 0, "delta": payload},
    "transcript": {"type": "response.output_audio_transcript.done", "item_id": "i1", "transcript": "Hello there"},
    "input-transcript": {"type": "conversation.item.input_audio_transcription.completed", "item_id": "i2", "transcript": "Hi"},
    "done": {"type": "response.done", "response": {"id": "r1", "status": "completed", "usage": {"total_tokens": 10}}},
    "error": {"type": "error", "error": {"type": "invalid_request_error", "code": "response_cancel_not_active", "message": "x"}},
    "speech-started": {"type": "input_audio_buffer.speech_started", "audio_start_ms": 100, "item_id": "i3"},
    "session-created": {"type": "session.created", "session": {"id": "s1"}},
}
for name, message in realtime.items():
    put("realtime-event", name, json.dumps(message))


def frame(opcode, payload, fin=True, mask=b"\x01\x02\x03\x04"):
    head = bytes([(0x80 if fin else 0) | opcode])
    n = len(payload)
    if n < 126:
        head += bytes([0x80 | n])
    elif n < 65536:
        head += bytes([0x80 | 126]) + struct.pack(">H", n)
    else:
        head += bytes([0x80 | 127]) + struct.pack(">Q", n)
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


text = json.dumps(twilio["media"]).encode()
put("websocket-frames", "text", frame(1, text))
put("websocket-frames", "fragments", frame(1, text[:10], fin=False) + frame(0, text[10:]))
put("websocket-frames", "ping-close", frame(9, b"hi") + frame(8, struct.pack(">H", 1000) + b"bye"))
put("websocket-frames", "huge-length", bytes([0x81, 0xFF]) + struct.pack(">Q", 0x7FFFFFFFFFFFFFFF) + b"\x00\x00\x00\x00")

samples = os.path.join(os.path.dirname(root), "..", "Tests", "ChorusProvidersTests", "Fixtures", "AppStore", "samples")
for name in sorted(os.listdir(samples))[:4]:
    with open(os.path.join(samples, name), "rb") as f:
        put("app-store-jws", name, f.read())
header = base64.urlsafe_b64encode(json.dumps({"alg": "ES256", "x5c": ["AAAA", "AAAA", "AAAA"]}).encode()).rstrip(b"=")
body = base64.urlsafe_b64encode(json.dumps({"signedDate": 9223372036854775807, "notificationType": "TEST"}).encode()).rstrip(b"=")
put("app-store-jws", "forged-huge-date", header + b"." + body + b".AAAA")

receipt = {"status": 0, "environment": "Sandbox", "receipt": {"bundle_id": "com.chorus.fuzz", "in_app": []},
           "latest_receipt_info": [{"product_id": "com.chorus.fuzz", "transaction_id": "1", "original_transaction_id": "1",
                                    "purchase_date_ms": "1700000000000", "expires_date_ms": "1702592000000", "quantity": "1"}],
           "pending_renewal_info": [{"original_transaction_id": "1", "product_id": "com.chorus.fuzz", "auto_renew_status": "1",
                                     "grace_period_expires_date_ms": "1702592000000", "expiration_intent": "1"}]}
put("app-store-receipt", "subscription", json.dumps(receipt))
receipt["latest_receipt_info"][0]["expires_date_ms"] = "9223372036854775807"
receipt["latest_receipt_info"][0]["quantity"] = "99999999999999999999"
put("app-store-receipt", "huge-numbers", json.dumps(receipt))

put("model-answers", "summary", json.dumps({"summary": "Dinner is at seven.", "action_items": [{"text": "Buy milk", "owner": "Dad"}],
                                            "dates": [{"text": "Friday", "description": "Recital"}], "urgency": "normal"}))
put("model-answers", "scenes", json.dumps({"scenes": [{"scene_number": 1, "text_segment": "a fox found a lantern", "emotion": "happy",
                                                       "importance": "high", "description": "A fox"}]}))
put("model-answers", "story", "TITLE: The Lantern\n\nOnce upon a time a fox found a lantern.\n\nThe end.")
put("model-answers", "urgency", json.dumps({"is_urgent": True, "reason": "pickup", "confidence": 0.9}))
put("model-answers", "prices", json.dumps({"openai": {"gpt-4.1-mini": {"input_per_million": 1e308}}}))
print("seeds written to", root, file=sys.stderr)
