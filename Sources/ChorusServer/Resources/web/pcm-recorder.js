// The playground's recorder worklet (`audioWorklet.addModule('/assets/pcm-recorder.js')`): turns the microphone's
// Float32 samples into what `GET /audio/stream` takes — 16-bit little-endian PCM, mono, 24 kHz — and posts it to the
// page in frames of 200 ms (9,600 bytes, under the stream's 32 KiB limit). Resamples linearly when the context does not
// run at 24 kHz. The page posts 'flush' when the recording stops; the worklet answers with the rest and `{ done: true }`.

const TARGET_RATE = 24000;
const FRAME_SAMPLES = 4800;

class PCMRecorder extends AudioWorkletProcessor {
  constructor() {
    super();
    this.step = sampleRate / TARGET_RATE;
    this.position = 0;
    this.previous = 0;
    this.frame = new Int16Array(FRAME_SAMPLES);
    this.filled = 0;
    this.stopped = false;
    this.port.onmessage = (event) => {
      if (event.data !== 'flush' || this.stopped) return;
      this.stopped = true;
      this.post(this.filled);
      this.port.postMessage({ done: true });
    };
  }

  post(count) {
    if (count <= 0) return;
    const frame = this.frame.slice(0, count);
    this.port.postMessage({ pcm: frame.buffer }, [frame.buffer]);
    this.filled = 0;
  }

  push(sample) {
    const clamped = Math.max(-1, Math.min(1, sample));
    this.frame[this.filled++] = Math.round(clamped < 0 ? clamped * 0x8000 : clamped * 0x7fff);
    if (this.filled === FRAME_SAMPLES) this.post(FRAME_SAMPLES);
  }

  process(inputs) {
    if (this.stopped) return false;
    const input = inputs[0]?.[0];
    if (!input) return true;
    if (this.step === 1) {
      for (const sample of input) this.push(sample);
      return true;
    }
    // Linear interpolation between the previous block's last sample and this block's samples.
    while (this.position < input.length) {
      const index = Math.floor(this.position);
      const fraction = this.position - index;
      const before = index === 0 ? this.previous : input[index - 1];
      const after = input[index];
      this.push(before + (after - before) * fraction);
      this.position += this.step;
    }
    this.position -= input.length;
    this.previous = input[input.length - 1];
    return true;
  }
}

registerProcessor('pcm-recorder', PCMRecorder);
