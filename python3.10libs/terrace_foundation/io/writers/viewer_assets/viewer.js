// Terrace Foundation 3D viewer: a small WebGL 2 renderer of our own (no third-party code).
//
// Reads the scene from <script id="terrace-data"> (written by
// terrace_foundation/io/writers/viewer_html.py),
// draws the terrain before or after terracing as a lit mesh coloured by the change, the lot
// outlines and the retaining walls on it; orbit / pan / zoom with the mouse; hover or click a lot
// to see its figures. window.terraceViewer is a small hook for tests and scripting.
//
// Coordinates: local metres from the grid centre, x east, y north. GL space: X = x,
// Y = (height - zmin) * exaggeration, Z = -y (north is -Z, away from the default camera).
"use strict";

(function () {
  const hook = {
    ready: false, error: null, frames: 0, lotCount: 0, pickable: 0, mode: "after",
    countPickable: null, pickAt: null, setMode: null, lotInfo: null, select: null, goto: null, screenOf: null,
    view: null,
  };
  window.terraceViewer = hook;

  const msg = document.getElementById("msg");
  function fail(text) {
    hook.error = text;
    msg.textContent = text;
    msg.style.display = "block";
  }

  // ------------------------------------------------------------------ data decoding

  function base64Bytes(s) {
    const bin = atob(s);
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  }

  async function inflate(s) {
    const stream = new Blob([base64Bytes(s)]).stream()
      .pipeThrough(new DecompressionStream("deflate"));
    return new Uint8Array(await new Response(stream).arrayBuffer());
  }

  // ColorBrewer RdBu (11 classes), most negative (cut) first: the same scale as preview.png.
  const RAMP = [
    [103, 0, 31], [178, 24, 43], [214, 96, 77], [244, 165, 130], [253, 219, 199],
    [247, 247, 247], [209, 229, 240], [146, 197, 222], [67, 147, 195], [33, 102, 172],
    [5, 48, 97]];

  // ------------------------------------------------------------------ small matrix helpers

  function perspective(fovy, aspect, near, far) {
    const f = 1 / Math.tan(fovy / 2), nf = 1 / (near - far);
    return new Float32Array([f / aspect, 0, 0, 0, 0, f, 0, 0, 0, 0, (far + near) * nf, -1,
      0, 0, 2 * far * near * nf, 0]);
  }

  function lookAt(eye, target, up) {
    let zx = eye[0] - target[0], zy = eye[1] - target[1], zz = eye[2] - target[2];
    let l = Math.hypot(zx, zy, zz) || 1;
    zx /= l; zy /= l; zz /= l;
    let xx = up[1] * zz - up[2] * zy, xy = up[2] * zx - up[0] * zz, xz = up[0] * zy - up[1] * zx;
    l = Math.hypot(xx, xy, xz) || 1;
    xx /= l; xy /= l; xz /= l;
    const yx = zy * xz - zz * xy, yy = zz * xx - zx * xz, yz = zx * xy - zy * xx;
    return new Float32Array([xx, yx, zx, 0, xy, yy, zy, 0, xz, yz, zz, 0,
      -(xx * eye[0] + xy * eye[1] + xz * eye[2]), -(yx * eye[0] + yy * eye[1] + yz * eye[2]),
      -(zx * eye[0] + zy * eye[1] + zz * eye[2]), 1]);
  }

  function multiply(a, b) {
    const out = new Float32Array(16);
    for (let c = 0; c < 4; c++) {
      for (let r = 0; r < 4; r++) {
        let s = 0;
        for (let k = 0; k < 4; k++) s += a[k * 4 + r] * b[c * 4 + k];
        out[c * 4 + r] = s;
      }
    }
    return out;
  }

  // ------------------------------------------------------------------ shaders

  const COMMON = `#version 300 es
precision highp float;
precision highp int;
precision highp sampler2D;
precision highp usampler2D;
uniform sampler2D uHeight;
uniform ivec2 uSize;
uniform vec2 uOrigin;
uniform float uSpacing;
uniform float uExag;
float H(ivec2 p) { return texelFetch(uHeight, clamp(p, ivec2(0), uSize - 1), 0).r; }
float bilinear(vec2 xy) {
  vec2 f = vec2((xy.x - uOrigin.x) / uSpacing, (uOrigin.y - xy.y) / uSpacing);
  f = clamp(f, vec2(0.0), vec2(uSize - 1));
  ivec2 p = ivec2(floor(f));
  vec2 t = f - vec2(p);
  float a = mix(H(p), H(p + ivec2(1, 0)), t.x);
  float b = mix(H(p + ivec2(0, 1)), H(p + ivec2(1, 1)), t.x);
  return mix(a, b, t.y);
}
`;

  const TERRAIN_VS = COMMON + `
uniform sampler2D uBefore;
uniform mat4 uMVP;
out vec3 vNormal;
out float vChange;
out vec2 vCell;
void main() {
  int i = gl_VertexID / uSize.x;
  int j = gl_VertexID - i * uSize.x;
  ivec2 p = ivec2(j, i);
  float h = H(p);
  vChange = h - texelFetch(uBefore, p, 0).r;
  float wx = float(min(j + 1, uSize.x - 1) - max(j - 1, 0)) * uSpacing;
  float wz = float(min(i + 1, uSize.y - 1) - max(i - 1, 0)) * uSpacing;
  float dx = (H(p + ivec2(1, 0)) - H(p - ivec2(1, 0))) / max(wx, 1e-6) * uExag;
  float dz = (H(p + ivec2(0, 1)) - H(p - ivec2(0, 1))) / max(wz, 1e-6) * uExag;
  vNormal = normalize(vec3(-dx, 1.0, -dz));
  vCell = vec2(j, i) + 0.5;
  vec3 pos = vec3(uOrigin.x + float(j) * uSpacing, h * uExag, -(uOrigin.y - float(i) * uSpacing));
  gl_Position = uMVP * vec4(pos, 1.0);
}`;

  const TERRAIN_FS = `#version 300 es
precision highp float;
precision highp int;
precision highp usampler2D;
uniform usampler2D uIds;
uniform ivec2 uSize;
uniform int uPick;
uniform int uShowChange;
uniform float uLimit;
uniform vec3 uRamp[11];
uniform uint uHover;
uniform uint uSelected;
uniform vec3 uLight;
in vec3 vNormal;
in float vChange;
in vec2 vCell;
out vec4 outColor;
vec3 ramp(float t) {
  float x = (clamp(t, -1.0, 1.0) + 1.0) * 5.0;
  int i = min(int(floor(x)), 9);
  return mix(uRamp[i], uRamp[i + 1], x - float(i));
}
void main() {
  ivec2 cell = clamp(ivec2(floor(vCell)), ivec2(0), uSize - 1);
  uint id = texelFetch(uIds, cell, 0).r;
  if (uPick == 1) {
    outColor = vec4(float(id & 255u), float((id >> 8) & 255u), float((id >> 16) & 255u), 255.0)
      / 255.0;
    return;
  }
  vec3 base = vec3(0.80, 0.78, 0.74);
  if (uShowChange == 1 && abs(vChange) > 0.01) base = ramp(vChange / uLimit);
  float lambert = max(dot(normalize(vNormal), uLight), 0.0);
  vec3 c = base * (0.30 + 0.70 * lambert);
  if (id != 0u && id == uSelected) c = mix(c, vec3(0.1, 0.95, 0.95), 0.55);
  else if (id != 0u && id == uHover) c = mix(c, vec3(1.0), 0.35);
  outColor = vec4(c, 1.0);
}`;

  const LINE_VS = COMMON + `
uniform mat4 uMVP;
uniform float uLift;
in vec2 aXY;
void main() {
  float h = bilinear(aXY);
  gl_Position = uMVP * vec4(aXY.x, h * uExag + uLift, -aXY.y, 1.0);
  gl_Position.z -= 0.0004 * gl_Position.w;
}`;

  const LINE_FS = `#version 300 es
precision highp float;
uniform vec4 uColor;
out vec4 outColor;
void main() { outColor = uColor; }`;

  // A wall is drawn where the terrace heightfield has its step: each piece of a wall line is a
  // vertical quad from the lower to the higher of the heights just either side of the line.
  const WALL_VS = COMMON + `
uniform mat4 uMVP;
in vec3 aPos;      // x, y, 0 = foot / 1 = crest
in vec2 aNormal;   // unit normal of the wall line, x y
out vec3 vNormal;
void main() {
  vNormal = vec3(aNormal.x, 0.0, -aNormal.y);
  vec2 off = aNormal * 0.75 * uSpacing;
  float a = bilinear(aPos.xy + off), b = bilinear(aPos.xy - off);
  float h = aPos.z > 0.5 ? max(a, b) : min(a, b);
  gl_Position = uMVP * vec4(aPos.x, h * uExag, -aPos.y, 1.0);
}`;

  const WALL_FS = `#version 300 es
precision highp float;
uniform vec3 uLight;
in vec3 vNormal;
out vec4 outColor;
void main() {
  float l = abs(dot(normalize(vNormal), uLight));
  outColor = vec4(vec3(1.0, 0.84, 0.0) * (0.45 + 0.55 * l), 1.0);
}`;

  function compile(gl, vs, fs) {
    const prog = gl.createProgram();
    for (const [type, src] of [[gl.VERTEX_SHADER, vs], [gl.FRAGMENT_SHADER, fs]]) {
      const sh = gl.createShader(type);
      gl.shaderSource(sh, src);
      gl.compileShader(sh);
      if (!gl.getShaderParameter(sh, gl.COMPILE_STATUS)) {
        throw new Error("shader: " + gl.getShaderInfoLog(sh));
      }
      gl.attachShader(prog, sh);
    }
    gl.linkProgram(prog);
    if (!gl.getProgramParameter(prog, gl.LINK_STATUS)) {
      throw new Error("program: " + gl.getProgramInfoLog(prog));
    }
    const loc = {};
    const n = gl.getProgramParameter(prog, gl.ACTIVE_UNIFORMS);
    for (let k = 0; k < n; k++) {
      const name = gl.getActiveUniform(prog, k).name.replace(/\[0\]$/, "");
      loc[name] = gl.getUniformLocation(prog, name);
    }
    return { prog, loc };
  }

  function floatTexture(gl, w, h, data) {
    const t = gl.createTexture();
    gl.bindTexture(gl.TEXTURE_2D, t);
    gl.pixelStorei(gl.UNPACK_ALIGNMENT, 1);
    gl.texImage2D(gl.TEXTURE_2D, 0, gl.R32F, w, h, 0, gl.RED, gl.FLOAT, data);
    for (const p of [gl.TEXTURE_MIN_FILTER, gl.TEXTURE_MAG_FILTER]) {
      gl.texParameteri(gl.TEXTURE_2D, p, gl.NEAREST);
    }
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_S, gl.CLAMP_TO_EDGE);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_T, gl.CLAMP_TO_EDGE);
    return t;
  }

  function uintTexture(gl, w, h, data) {
    const t = gl.createTexture();
    gl.bindTexture(gl.TEXTURE_2D, t);
    gl.pixelStorei(gl.UNPACK_ALIGNMENT, 1);
    gl.texImage2D(gl.TEXTURE_2D, 0, gl.R32UI, w, h, 0, gl.RED_INTEGER, gl.UNSIGNED_INT, data);
    for (const p of [gl.TEXTURE_MIN_FILTER, gl.TEXTURE_MAG_FILTER]) {
      gl.texParameteri(gl.TEXTURE_2D, p, gl.NEAREST);
    }
    return t;
  }

  // ------------------------------------------------------------------ the scene

  async function start() {
    const el = document.getElementById("terrace-data");
    const data = JSON.parse(el.textContent);
    if (!data || data.format !== "terrace-foundation-viewer/1") {
      fail("This page holds no Terrace Foundation scene.");
      return;
    }
    if (typeof DecompressionStream === "undefined") {
      fail("This browser is too old for the viewer (no DecompressionStream); " +
        "use a current Chrome, Edge, Firefox or Safari.");
      return;
    }
    const canvas = document.getElementById("view");
    const gl = canvas.getContext("webgl2", { antialias: true, preserveDrawingBuffer: true });
    if (!gl) {
      fail("WebGL 2 is not available in this browser, so the 3D view cannot be shown.");
      return;
    }
    const g = data.grid;
    const C = g.samplesCols, R = g.samplesRows, N = R * C;
    const spacing = g.cell * g.step;
    const span = Math.max(g.zmax - g.zmin, 1e-6);
    const [qb, qa, qi, qo, qw] = await Promise.all(
      [data.before, data.after, data.ids, data.outline, data.walls].map(inflate));

    function heights(bytes) {
      const q = new Uint16Array(bytes.buffer, bytes.byteOffset, N);
      const h = new Float32Array(N);
      const s = span / 65535;
      for (let k = 0; k < N; k++) h[k] = q[k] * s;      // metres above zmin
      return h;
    }
    const hBefore = heights(qb), hAfter = heights(qa);
    const ids = new Uint32Array(N);
    const idSrc = data.idBytes === 4 ? new Uint32Array(qi.buffer, qi.byteOffset, N)
      : new Uint16Array(qi.buffer, qi.byteOffset, N);
    ids.set(idSrc);

    const lots = new Map();
    for (const row of data.lots) {
      lots.set(row[0], { id: row[0], region: row[1], pad: row[2], area: row[3], cut: row[4],
        fill: row[5], pick: row[6] });
    }
    hook.lotCount = lots.size;
    hook.pickable = data.pickable;

    const terrain = compile(gl, TERRAIN_VS, TERRAIN_FS);
    const lines = compile(gl, LINE_VS, LINE_FS);
    const wallsProg = compile(gl, WALL_VS, WALL_FS);
    const texBefore = floatTexture(gl, C, R, hBefore);
    const texAfter = floatTexture(gl, C, R, hAfter);
    const texIds = uintTexture(gl, C, R, ids);

    // triangle indices of the grid (two per quad); positions come from gl_VertexID
    const index = new Uint32Array((R - 1) * (C - 1) * 6);
    let k = 0;
    for (let i = 0; i < R - 1; i++) {
      for (let j = 0; j < C - 1; j++) {
        const a = i * C + j, b = a + 1, c = a + C, d = c + 1;
        index[k++] = a; index[k++] = c; index[k++] = b;
        index[k++] = b; index[k++] = c; index[k++] = d;
      }
    }
    const terrainVao = gl.createVertexArray();
    gl.bindVertexArray(terrainVao);
    const ibo = gl.createBuffer();
    gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, ibo);
    gl.bufferData(gl.ELEMENT_ARRAY_BUFFER, index, gl.STATIC_DRAW);
    gl.bindVertexArray(null);

    // lot outlines: (x0, y0, x1, y1) per segment, split into short pieces so they follow the
    // terrain between the outline's vertices
    const oseg = new Float32Array(qo.buffer, qo.byteOffset, data.outlineCount * 4);
    const pts = [];
    for (let s = 0; s < data.outlineCount; s++) {
      const x0 = oseg[4 * s], y0 = oseg[4 * s + 1], x1 = oseg[4 * s + 2], y1 = oseg[4 * s + 3];
      const n = Math.max(1, Math.min(64, Math.ceil(Math.hypot(x1 - x0, y1 - y0) / spacing)));
      for (let t = 0; t < n; t++) {
        pts.push(x0 + (x1 - x0) * t / n, y0 + (y1 - y0) * t / n,
          x0 + (x1 - x0) * (t + 1) / n, y0 + (y1 - y0) * (t + 1) / n);
      }
    }
    const lineVerts = new Float32Array(pts);
    const lineVao = gl.createVertexArray();
    gl.bindVertexArray(lineVao);
    gl.bindBuffer(gl.ARRAY_BUFFER, gl.createBuffer());
    gl.bufferData(gl.ARRAY_BUFFER, lineVerts, gl.STATIC_DRAW);
    const aXY = gl.getAttribLocation(lines.prog, "aXY");
    gl.enableVertexAttribArray(aXY);
    gl.vertexAttribPointer(aXY, 2, gl.FLOAT, false, 0, 0);
    gl.bindVertexArray(null);

    // walls: each segment cut into pieces about one sample long, one vertical quad per piece
    const wseg = new Float32Array(qw.buffer, qw.byteOffset, data.wallCount * 6);
    const wl = [];
    for (let s = 0; s < data.wallCount; s++) {
      const x0 = wseg[6 * s], y0 = wseg[6 * s + 1], x1 = wseg[6 * s + 2], y1 = wseg[6 * s + 3];
      const l = Math.hypot(x1 - x0, y1 - y0) || 1, nx = (y1 - y0) / l, ny = -(x1 - x0) / l;
      const n = Math.max(1, Math.min(64, Math.ceil(l / spacing)));
      for (let t = 0; t < n; t++) {
        const ax = x0 + (x1 - x0) * t / n, ay = y0 + (y1 - y0) * t / n;
        const bx = x0 + (x1 - x0) * (t + 1) / n, by = y0 + (y1 - y0) * (t + 1) / n;
        for (const c of [[ax, ay, 0], [bx, by, 0], [bx, by, 1], [ax, ay, 0], [bx, by, 1],
          [ax, ay, 1]]) {
          wl.push(c[0], c[1], c[2], nx, ny);
        }
      }
    }
    const wv = new Float32Array(wl);
    const wallVerts = wv.length / 5;
    const wallVao = gl.createVertexArray();
    gl.bindVertexArray(wallVao);
    gl.bindBuffer(gl.ARRAY_BUFFER, gl.createBuffer());
    gl.bufferData(gl.ARRAY_BUFFER, wv, gl.STATIC_DRAW);
    const aPos = gl.getAttribLocation(wallsProg.prog, "aPos");
    const aNormal = gl.getAttribLocation(wallsProg.prog, "aNormal");
    gl.enableVertexAttribArray(aPos);
    gl.vertexAttribPointer(aPos, 3, gl.FLOAT, false, 20, 0);
    gl.enableVertexAttribArray(aNormal);
    gl.vertexAttribPointer(aNormal, 2, gl.FLOAT, false, 20, 12);
    gl.bindVertexArray(null);

    // ---------------------------------------------------------------- view state
    const width = (C - 1) * spacing, depth = (R - 1) * spacing;
    const extent = Math.max(width, depth, spacing);
    const state = {
      mode: "after", showOutline: true, showWalls: true, showChange: true, exag: 1,
      yaw: 0, pitch: 0.75, dist: 1.25 * extent, target: [0, 0, 0],
      hover: 0, selected: 0,
    };
    // look at a box (local x0, y0, x1, y1) from the south, from at least minShare of the map
    function frame(f, minShare) {
      state.yaw = 0; state.pitch = 0.75;
      if (f) {
        const size = Math.max(f[2] - f[0], f[3] - f[1], minShare * extent, 20 * spacing);
        state.dist = Math.min(1.6 * size, 1.25 * extent);
        const cx = (f[0] + f[2]) / 2, cy = (f[1] + f[3]) / 2;
        const j = Math.round((cx - g.x0) / spacing), i = Math.round((g.y0 - cy) / spacing);
        const hh = hAfter[Math.min(R - 1, Math.max(0, i)) * C + Math.min(C - 1, Math.max(0, j))];
        state.target = [cx, hh * state.exag, -cy];
      } else {
        state.dist = 1.25 * extent;
        state.target = [g.x0 + width / 2, 0.5 * span * state.exag, -(g.y0 - depth / 2)];
      }
    }
    function resetView() { frame(data.focus, 0.25); }   // the lots, with some land around them
    resetView();
    const ramp = new Float32Array(RAMP.flat().map((v) => v / 255));
    const light = (() => {      // sun from the north-west, 45 degrees up (as the hillshade)
      const v = [-Math.SQRT1_2 * Math.SQRT1_2, Math.SQRT1_2, -Math.SQRT1_2 * Math.SQRT1_2];
      const l = Math.hypot(...v);
      return new Float32Array(v.map((c) => c / l));
    })();

    function matrices(aspect, st) {
      const cp = Math.cos(st.pitch), sp = Math.sin(st.pitch);
      const eye = [st.target[0] + st.dist * cp * Math.sin(st.yaw), st.target[1] + st.dist * sp,
        st.target[2] + st.dist * cp * Math.cos(st.yaw)];
      const up = st.pitch > 1.5 ? [-Math.sin(st.yaw), 0, -Math.cos(st.yaw)] : [0, 1, 0];
      const near = Math.max(st.dist * 0.005, 0.01);
      const far = st.dist * 4 + extent * 4 + span * st.exag * 4;
      return multiply(perspective(40 * Math.PI / 180, aspect, near, far), lookAt(eye, st.target, up));
    }

    function setCommon(prog, mvp) {
      gl.useProgram(prog.prog);
      const L = prog.loc;
      if (L.uMVP) gl.uniformMatrix4fv(L.uMVP, false, mvp);
      if (L.uSize) gl.uniform2i(L.uSize, C, R);
      if (L.uOrigin) gl.uniform2f(L.uOrigin, g.x0, g.y0);
      if (L.uSpacing) gl.uniform1f(L.uSpacing, spacing);
      if (L.uExag) gl.uniform1f(L.uExag, state.exag);
      if (L.uLight) gl.uniform3fv(L.uLight, light);
      if (L.uHeight) {
        gl.activeTexture(gl.TEXTURE0);
        gl.bindTexture(gl.TEXTURE_2D, state.mode === "after" ? texAfter : texBefore);
        gl.uniform1i(L.uHeight, 0);
      }
    }

    function drawTerrain(mvp, pick) {
      setCommon(terrain, mvp);
      const L = terrain.loc;
      gl.activeTexture(gl.TEXTURE1);
      gl.bindTexture(gl.TEXTURE_2D, texBefore);
      gl.uniform1i(L.uBefore, 1);
      gl.activeTexture(gl.TEXTURE2);
      gl.bindTexture(gl.TEXTURE_2D, texIds);
      gl.uniform1i(L.uIds, 2);
      gl.uniform1i(L.uPick, pick ? 1 : 0);
      gl.uniform1i(L.uShowChange, state.showChange && state.mode === "after" ? 1 : 0);
      gl.uniform1f(L.uLimit, data.limit);
      gl.uniform3fv(L.uRamp, ramp);
      gl.uniform1ui(L.uHover, state.hover >>> 0);
      gl.uniform1ui(L.uSelected, state.selected >>> 0);
      gl.bindVertexArray(terrainVao);
      gl.drawElements(gl.TRIANGLES, index.length, gl.UNSIGNED_INT, 0);
      gl.bindVertexArray(null);
    }

    function draw() {
      const w = canvas.width, h = canvas.height;
      gl.bindFramebuffer(gl.FRAMEBUFFER, null);
      gl.viewport(0, 0, w, h);
      gl.clearColor(0.125, 0.141, 0.165, 1);
      gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
      gl.enable(gl.DEPTH_TEST);
      const mvp = matrices(w / h, state);
      drawTerrain(mvp, false);
      if (state.showWalls && state.mode === "after" && data.wallCount) {
        setCommon(wallsProg, mvp);
        gl.disable(gl.CULL_FACE);
        gl.bindVertexArray(wallVao);
        gl.drawArrays(gl.TRIANGLES, 0, wallVerts);
        gl.bindVertexArray(null);
      }
      if (state.showOutline && lineVerts.length) {
        setCommon(lines, mvp);
        gl.uniform1f(lines.loc.uLift, 0.0);
        gl.uniform4f(lines.loc.uColor, 0.05, 0.05, 0.05, 0.75);
        gl.enable(gl.BLEND);
        gl.blendFunc(gl.SRC_ALPHA, gl.ONE_MINUS_SRC_ALPHA);
        gl.bindVertexArray(lineVao);
        gl.drawArrays(gl.LINES, 0, lineVerts.length / 2);
        gl.bindVertexArray(null);
        gl.disable(gl.BLEND);
      }
      hook.frames++;
    }

    // ---------------------------------------------------------------- picking
    const pickFbo = gl.createFramebuffer();
    const pickColor = gl.createRenderbuffer();
    const pickDepth = gl.createRenderbuffer();
    let pickW = 0, pickH = 0, pickValid = false;
    function pickTarget(w, h) {
      if (w !== pickW || h !== pickH) {
        gl.bindRenderbuffer(gl.RENDERBUFFER, pickColor);
        gl.renderbufferStorage(gl.RENDERBUFFER, gl.RGBA8, w, h);
        gl.bindRenderbuffer(gl.RENDERBUFFER, pickDepth);
        gl.renderbufferStorage(gl.RENDERBUFFER, gl.DEPTH_COMPONENT24, w, h);
        gl.bindFramebuffer(gl.FRAMEBUFFER, pickFbo);
        gl.framebufferRenderbuffer(gl.FRAMEBUFFER, gl.COLOR_ATTACHMENT0, gl.RENDERBUFFER,
          pickColor);
        gl.framebufferRenderbuffer(gl.FRAMEBUFFER, gl.DEPTH_ATTACHMENT, gl.RENDERBUFFER,
          pickDepth);
        pickW = w; pickH = h;
        pickValid = false;
      }
      gl.bindFramebuffer(gl.FRAMEBUFFER, pickFbo);
      gl.viewport(0, 0, w, h);
    }
    function renderPick(w, h, st) {
      pickTarget(w, h);
      gl.clearColor(0, 0, 0, 1);
      gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
      gl.enable(gl.DEPTH_TEST);
      drawTerrain(matrices(w / h, st), true);
    }
    function readId(x, y) {           // framebuffer pixel, y from the bottom
      const px = new Uint8Array(4);
      gl.readPixels(x, y, 1, 1, gl.RGBA, gl.UNSIGNED_BYTE, px);
      return px[0] + px[1] * 256 + px[2] * 65536;
    }
    function pickAt(cssX, cssY) {
      const r = canvas.getBoundingClientRect();
      const sx = canvas.width / r.width, sy = canvas.height / r.height;
      const x = Math.floor(cssX * sx), y = canvas.height - 1 - Math.floor(cssY * sy);
      if (x < 0 || y < 0 || x >= canvas.width || y >= canvas.height) return 0;
      if (!pickValid) {
        renderPick(canvas.width, canvas.height, state);
        pickValid = true;
      } else {
        gl.bindFramebuffer(gl.FRAMEBUFFER, pickFbo);
      }
      const id = readId(x, y);
      gl.bindFramebuffer(gl.FRAMEBUFFER, null);
      return id;
    }
    // Test hook: look straight down at every lot's pick point (a sample of that lot) from close
    // by, render the pick pass and read the id under the centre pixel. Returns how many lots
    // answer with their own id (the whole path: data, textures, rasterising, id encoding).
    function countPickable() {
      const size = 33, found = [];
      for (const lot of lots.values()) {
        if (!lot.pick) continue;
        const [i, j] = lot.pick;
        const hh = (state.mode === "after" ? hAfter : hBefore)[i * C + j];
        const st = Object.assign({}, state, {
          yaw: 0, pitch: 1.5707, dist: 12 * spacing,
          target: [g.x0 + j * spacing, hh * state.exag, -(g.y0 - i * spacing)],
        });
        renderPick(size, size, st);
        if (readId((size - 1) / 2, (size - 1) / 2) === lot.id) found.push(lot.id);
      }
      gl.bindFramebuffer(gl.FRAMEBUFFER, null);
      pickValid = false;
      request();
      return found.length;
    }

    // ---------------------------------------------------------------- UI
    const info = document.getElementById("info");
    function fmt(v, unit, digits) {
      if (v === null || v === undefined) return "–";
      return v.toLocaleString("en", { maximumFractionDigits: digits }) + (unit ? " " + unit : "");
    }
    function showInfo(id) {
      const lot = lots.get(id);
      if (!lot) { info.style.display = "none"; return; }
      info.innerHTML = "<table>" +
        `<tr><td>lot</td><td><b>${lot.id}</b></td></tr>` +
        `<tr><td>region</td><td>${lot.region}</td></tr>` +
        `<tr><td>pad height</td><td>${fmt(lot.pad, "m", 2)}</td></tr>` +
        `<tr><td>area</td><td>${fmt(lot.area, "m²", 0)}</td></tr>` +
        `<tr><td>cut</td><td>${fmt(lot.cut, "m³", 0)}</td></tr>` +
        `<tr><td>fill</td><td>${fmt(lot.fill, "m³", 0)}</td></tr>` +
        (id === state.selected ? "<tr><td colspan=2 style='color:#ccb'>pinned (click elsewhere to release)</td></tr>" : "") +
        "</table>";
      info.style.display = "block";
    }
    hook.lotInfo = (id) => lots.get(id) || null;
    // CSS pixel (from the canvas' top left) where a lot's pick point is drawn now, or null
    hook.screenOf = (id) => {
      const lot = lots.get(id);
      if (!lot || !lot.pick) return null;
      const [i, j] = lot.pick;
      const hh = (state.mode === "after" ? hAfter : hBefore)[i * C + j];
      const m = matrices(canvas.width / canvas.height, state);
      const p = [g.x0 + j * spacing, hh * state.exag, -(g.y0 - i * spacing), 1];
      const clip = [0, 1, 2, 3].map((r) => m[r] * p[0] + m[4 + r] * p[1] + m[8 + r] * p[2] +
        m[12 + r] * p[3]);
      if (clip[3] <= 0) return null;
      const r = canvas.getBoundingClientRect();
      return [(clip[0] / clip[3] + 1) / 2 * r.width, (1 - clip[1] / clip[3]) / 2 * r.height];
    };
    hook.select = (id) => {       // pin a lot as a click does (0 releases)
      state.selected = lots.has(id) ? id : 0;
      showInfo(state.selected);
      request();
      return state.selected;
    };

    let pending = false;
    function request() {
      if (pending) return;
      pending = true;
      requestAnimationFrame(() => {
        pending = false;
        resize();
        draw();
        hook.view = { yaw: state.yaw, pitch: state.pitch, dist: state.dist };
        if (!hook.ready) {
          hook.ready = true;
          document.body.dataset.ready = "1";
        }
      });
    }
    function changed() { pickValid = false; request(); }
    function resize() {
      const dpr = window.devicePixelRatio || 1;
      const w = Math.max(1, Math.round(canvas.clientWidth * dpr));
      const h = Math.max(1, Math.round(canvas.clientHeight * dpr));
      if (canvas.width !== w || canvas.height !== h) {
        canvas.width = w; canvas.height = h;
        pickValid = false;
      }
    }
    window.addEventListener("resize", changed);

    function setMode(mode) {
      state.mode = mode === "before" ? "before" : "after";
      hook.mode = state.mode;
      document.getElementById("btn-before").classList.toggle("on", state.mode === "before");
      document.getElementById("btn-after").classList.toggle("on", state.mode === "after");
      changed();
    }
    hook.setMode = setMode;
    hook.pickAt = pickAt;
    hook.countPickable = countPickable;
    document.getElementById("btn-before").onclick = () => setMode("before");
    document.getElementById("btn-after").onclick = () => setMode("after");
    document.getElementById("btn-reset").onclick = () => { resetView(); changed(); };
    function topView() { state.pitch = 1.5707; state.yaw = 0; changed(); }
    document.getElementById("btn-top").onclick = topView;
    document.getElementById("chk-outline").onchange = (e) => {
      state.showOutline = e.target.checked; changed();
    };
    document.getElementById("chk-walls").onchange = (e) => {
      state.showWalls = e.target.checked; changed();
    };
    document.getElementById("chk-change").onchange = (e) => {
      state.showChange = e.target.checked; changed();
    };
    const exag = document.getElementById("rng-exag");
    exag.oninput = () => {
      const old = state.exag;
      state.exag = parseFloat(exag.value);
      state.target[1] *= state.exag / old;
      document.getElementById("exag-val").textContent = exag.value;
      changed();
    };
    window.addEventListener("keydown", (e) => {
      if (e.target && e.target.tagName === "INPUT") return;
      const key = e.key.toLowerCase();
      if (key === "b") setMode("before");
      else if (key === "a") setMode("after");
      else if (key === "r") { resetView(); changed(); }
      else if (key === "t") topView();
    });

    // mouse: left drag orbits, right drag (or shift) pans, wheel zooms; click picks
    let drag = null;
    canvas.addEventListener("contextmenu", (e) => e.preventDefault());
    canvas.addEventListener("pointerdown", (e) => {
      drag = { x: e.clientX, y: e.clientY, pan: e.button === 2 || e.shiftKey, moved: 0 };
      canvas.setPointerCapture(e.pointerId);
    });
    canvas.addEventListener("pointerup", (e) => {
      if (drag && drag.moved < 4) {
        const r = canvas.getBoundingClientRect();
        const id = pickAt(e.clientX - r.left, e.clientY - r.top);
        state.selected = id && id !== state.selected ? id : 0;
        showInfo(state.selected || id);
        request();
      }
      drag = null;
    });
    canvas.addEventListener("pointermove", (e) => {
      if (drag) {
        const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
        drag.x = e.clientX; drag.y = e.clientY;
        drag.moved += Math.abs(dx) + Math.abs(dy);
        if (drag.pan) {
          const s = state.dist / canvas.clientHeight * 0.75;
          const cy = Math.cos(state.yaw), sy = Math.sin(state.yaw);
          state.target[0] += (-dx * cy - dy * sy) * s;
          state.target[2] += (dx * sy - dy * cy) * s;
        } else {
          state.yaw -= dx * 0.006;
          state.pitch = Math.min(1.5707, Math.max(0.05, state.pitch + dy * 0.006));
        }
        changed();
        return;
      }
      const r = canvas.getBoundingClientRect();
      const id = pickAt(e.clientX - r.left, e.clientY - r.top);
      if (id !== state.hover) {
        state.hover = id;
        if (!state.selected) showInfo(id);
        request();
      }
    });
    canvas.addEventListener("wheel", (e) => {
      e.preventDefault();
      state.dist = Math.min(extent * 8, Math.max(spacing * 3,
        state.dist * Math.exp(e.deltaY * 0.0012)));
      changed();
    }, { passive: false });

    // ---------------------------------------------------------------- text
    document.title = "Terrace Foundation viewer" + (data.title ? " – " + data.title : "");
    document.getElementById("title").textContent = data.title || "Terrace Foundation";
    const t = data.totals || {};
    document.getElementById("summary").innerHTML =
      `${lots.size} lots · ${g.rows} × ${g.cols} cells of ${Number(g.cell.toPrecision(4))} m` +
      (g.step > 1 ? ` · mesh: 1 sample in ${g.step} cells each way (${R} × ${C})` : "") +
      (t.cut_volume !== undefined ? `<br>cut ${fmt(t.cut_volume, "m³", 0)} · fill ${fmt(t.fill_volume, "m³", 0)}` : "") +
      (data.wallTotal ? ` · ${data.wallTotal} retaining walls` : "");
    const stops = RAMP.map((c, n) => `rgb(${c.join(",")}) ${(n * 10)}%`).join(",");
    document.getElementById("bar").style.background = `linear-gradient(to right, ${stops})`;
    const L = data.limit;
    document.getElementById("ticks").innerHTML = [-L, -L / 2, 0, L / 2, L]
      .map((v) => `<span>${v > 0 ? "+" : ""}${Number(v.toPrecision(3))}</span>`).join("");

    const sel = document.getElementById("sel-goto");
    const regions = data.regions || [];
    if (regions.length < 2) document.getElementById("goto-row").style.display = "none";
    for (const r of regions) {
      const o = document.createElement("option");
      o.value = String(r.id);
      o.textContent = `region ${r.id} (${r.lots} lots, ${(r.area / 1e4).toFixed(1)} ha)`;
      sel.appendChild(o);
    }
    sel.onchange = () => {
      const r = regions.find((x) => String(x.id) === sel.value);
      if (r) frame(r.box, 0); else resetView();
      changed();
    };
    hook.goto = (regionId) => {   // frame one region's lots as the "go to" menu does
      sel.value = regions.some((x) => x.id === regionId) ? String(regionId) : "";
      sel.onchange();
      return sel.value;
    };

    msg.style.display = "none";
    request();
  }

  start().catch((e) => {
    fail("The viewer failed: " + (e && e.message ? e.message : e));
    console.error(e);
  });
})();
