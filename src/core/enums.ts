/**
 * Enumerations of the Pieces OS API, as the SDK (4.1.0) defines them: written by
 * scripts/enums.mjs from the SDK's models. Do not edit.
 * Kept here, not imported, so that the worker bundle does not carry the SDK.
 */
export const ApplicationNameEnum = [
  'UNKNOWN', 'SUBLIME', 'VS_CODE', 'JETBRAINS', 'FIREFOX_ADDON_MV2', 'FIREFOX_ADDON_MV3',
  'SAFARI_EXTENSION_MV2', 'SAFARI_EXTENSION_MV3', 'PIECES_FOR_DEVELOPERS',
  'PIECES_FOR_DEVELOPERS_CLI', 'OS_SERVER', 'GOOGLE_CHROME_EXTENSION_MV2',
  'GOOGLE_CHROME_EXTENSION_MV3', 'ULTRA_EDIT', 'ATOM_PACKAGE',
  'ADOBE_ILLUSTRATOR_PIECES_COLOR_SHARE', 'MICROSOFT_TEAMS', 'CHAT_GPT', 'OBSIDIAN', 'JUPYTER_HUB',
  'VISUAL_STUDIO', 'MICROSOFT_EDGE', 'BRAVE', 'GOOGLE_CHAT', 'SLACK', 'AZURE_DATA_STUDIO',
  'OPEN_SOURCE', 'R_STUDIO', 'VIM', 'NOTION', 'GITHUB_DESKTOP', 'RAYCAST', 'REPLIT', 'ALFRED',
  'FIGMA', 'SKETCH', 'ADOBE_ILLUSTRATOR', 'NOTEPAD_PLUS_PLUS', 'EMBEETLE', 'ECLIPSE', 'X_CODE',
  'NETBEANS', 'OPERA',
] as const;
export const PlatformEnum = [
  'UNKNOWN', 'WEB', 'MACOS', 'LINUX', 'WINDOWS', 'FUCHSIA', 'IOS', 'ANDROID',
] as const;
export const PrivacyEnum = ['UNKNOWN', 'OPEN', 'CLOSED', 'ANONYMOUS'] as const;
export const CapabilitiesEnum = ['UNKNOWN', 'LOCAL', 'CLOUD', 'BLENDED'] as const;
export const MechanismEnum = [
  'UNKNOWN', 'MANUAL', 'RECOMMENDED', 'AUTOMATIC', 'INTERNAL', 'DELETED', 'EXTERNAL_AGENT',
] as const;
export const ConversationTypeEnum = ['UNKNOWN', 'COPILOT'] as const;
export const MessageRoleEnum = ['UNKNOWN', 'USER', 'SYSTEM', 'ASSISTANT'] as const;
export const MessageSentimentEnum = ['UNKNOWN', 'LIKE', 'DISLIKE', 'REPORT'] as const;
export const AnnotationTypeEnum = [
  'UNKNOWN', 'DESCRIPTION', 'COMMENT', 'DOCUMENTATION', 'SUMMARY', 'EXPLANATION', 'GIT_COMMIT',
] as const;
export const AnchorTypeEnum = ['UNKNOWN', 'FILE', 'DIRECTORY'] as const;
export const ModelTypeEnum = ['UNKNOWN', 'BALANCED', 'SPEED', 'ACCURACY'] as const;
export const ModelUsageEnum = [
  'UNKNOWN', 'OCR', 'CODE_CLASSIFICATION', 'TEXT_VS_CODE', 'TAGIFY_CODE', 'TLP_TAG_SEARCH',
  'TLP_NEURAL_CODE_SEARCH', 'TAGIFY_COLOR_FROM_CODE', 'CODE_DESCRIPTION', 'CODE_TITLE',
  'CODE_SEARCH_QUERIES', 'CODE_EXTRACTIVE_TAGS', 'CODE_EXTRACTIVE_LINKS', 'CODE_CONVERSATION',
  'CODE_GENERATION', 'CODE_SEARCH', 'CODE_DISCOVERY', 'CODE_RELATED_PEOPLE', 'CODE_FRAMEWORK',
  'VIDEO_OCR', 'TEXT_VS_CODE_SEGMENTATION', 'TEXT_EMBEDDING', 'TECHNICAL_ERROR',
] as const;
export const ModelFoundationEnum = [
  'UNKNOWN', 'GPT_3.5', 'GPT_4', 'T5', 'LLAMA_2_7B', 'LLAMA_2_13B', 'LLAMA_2_70B', 'LLAMA_3_2B',
  'LLAMA_3_13B', 'LLAMA_3_70B', 'CODE_LLAMA_2_7B', 'CODE_LLAMA_2_13B', 'CODE_LLAMA_2_70B', 'BARD',
  'ALPACA_7B', 'ALPACA_13B', 'ALPACA_33B', 'ALPACA_65B', 'VICUNA_7B', 'VICUNA_13B', 'VICUNA_33B',
  'VICUNA_65B', 'GUANACO_7B', 'GUANACO_13B', 'GUANACO_33B', 'GUANACO_65B', 'OPENLLAMA_7B',
  'OPENLLAMA_13B', 'GORILLA_7B', 'GORILLA_13B', 'GORILLA_33B', 'GORILLA_65B', 'WIZARDLM_7B',
  'WIZARDLM_13B', 'WIZARDLM_30B', 'YULANCHAT_13B', 'YULANCHAT_65B', 'REDPAJAMA_3B', 'REDPAJAMA_7B',
  'REDPAJAMA_13B', 'REDPAJAMA_33B', 'REDPAJAMA_65B', 'DOLLY_70M', 'DOLLY_160M', 'DOLLY_410M',
  'DOLLY_1B', 'DOLLY_1.4B', 'DOLLY_2.8B', 'DOLLY_6.9B', 'DOLLY_12B', 'PYTHIA_70M', 'PYTHIA_160M',
  'PYTHIA_410M', 'PYTHIA_1B', 'PYTHIA_1.4B', 'PYTHIA_2.8B', 'PYTHIA_6.9B', 'PYTHIA_12B', 'MOSS_7B',
  'MOSS_13B', 'RMKV_LM_100M', 'RMKV_LM_400M', 'RMKV_LM_1.5B', 'RMKV_LM_3B', 'RMKV_LM_7B',
  'RMKV_LM_14B', 'STARCODER_15.5B', 'WIZARDCODER_15B', 'SANTACODER_1.1B', 'TEXT_BISON',
  'TEXTEMBEDDING_GECKO', 'CHAT_BISON', 'CODE_BISON', 'CODECHAT_BISON', 'CODE_GECKO',
  'DISTILROBERTA', 'MISTRAL_7B', 'GEMINI', 'GEMINI_1.5', 'GEMINI_2', 'FAST_TEXT', 'UNIXCODER',
  'PHI_1.5', 'PHI_2', 'MIXTRAL_8_x_7B', 'MIXTRAL_8_x_22B', 'GEMMA_7B', 'GEMMA_2B', 'CODE_GEMMA_7B',
  'CODE_GEMMA_2B', 'RECURRENT_GEMMA_2B', 'GROK_1', 'GROK_1.5', 'CLAUDE_2', 'CLAUDE_3',
  'STARLING_7B', 'DBRX', 'COMMAND_R+', 'GEMMA_1.1_2B', 'GEMMA_1.1_7B', 'GEMMA_2_9B', 'PHI_3_MINI',
  'PHI_3_SMALL', 'GRANITE_3B', 'GRANITE_8B', 'LLAMA_3_8B', 'CLAUDE_3.5', 'CLAUDE_LATEST',
  'GRANITE_LATEST', 'LLAMA_LATEST', 'PHI_LATEST', 'GEMMA_LATEST', 'GEMINI_LATEST', 'GPT_LATEST',
  'AZURE_LATEST', 'AZURE_FAST', 'AZURE_BEST', 'AZURE_DEFAULT', 'AZURE_CUSTOM', 'PERPLEXITY_LATEST',
  'PERPLEXITY_FAST', 'PERPLEXITY_BEST', 'PERPLEXITY_DEFAULT', 'PERPLEXITY_CUSTOM',
  'CODESTRAL_LATEST', 'DEEPSEEK_LATEST', 'LLAVA_LATEST', 'MIXTRAL_LATEST', 'MISTRAL_LATEST',
  'ORCA_LATEST', 'QWEN_CODER_LATEST', 'QWEN_LATEST', 'QWQ_LATEST', 'STARCODER_LATEST',
  'TINYLLAMA_LATEST', 'VICUNA_LATEST', 'WIZARD_LATEST', 'ZEPHYR_LATEST', 'POTION',
] as const;
export const ExternalMLProviderEnum = [
  'UNKNOWN', 'APPLE', 'AMAZON', 'GOOGLE', 'META', 'OPENAI', 'LMSYS', 'SALESFORCE', 'HUGGING_FACE',
  'UNIVERSITY_OF_WASHINGTON', 'OPEN_LM_RESEARCH', 'MICROSOFT', 'UC_BERKLEY', 'PEKING_UNIVERSITY',
  'RENMIN_UNIVERSITY_OF_CHINA', 'TOGETHER_AI', 'DATABRICKS', 'ELEUTHER_AI', 'FUDAN_UNIVERSITY',
  'BLICKDL', 'HONG_KONG_BAPTIST_UNIVERSITY', 'BIGCODE', 'JINA', 'PIECES', 'ANTHROPIC', 'IBM',
  'SNOWFLAKE', 'PERPLEXITY', 'MINISHLABS',
] as const;
export const ModelDownloadProgressStatusEnum = [
  'UNKNOWN', 'INITIALIZED', 'IN-PROGRESS', 'COMPLETED', 'FAILED', 'CANCELED', 'RESET',
] as const;
export const OSAppletEnum = [
  'UNKNOWN_APPLET_MODULE', 'COPILOT', 'PIECES_OS_TOOLBAR', 'WORKSTREAM_SUGGESTIONS',
  'SAVED_MATERIALS', 'WORKFLOW_ACTIVITY', 'WORKSTREAM_ACTIVITY', 'GLOBAL_SEARCH',
  'PIECES_SUITE_SETTINGS_AND_INTEGRATIONS_MANAGER', 'CAPTURED_CONTEXT', 'UPDATES_AND_UPCOMING',
  'NOTIFICATIONS_MANAGER', 'SHAREBLE_LINK_VIEWER', 'FUTURE_APPLET_MODULE_PLACEHOLDER_A',
  'FUTURE_APPLET_MODULE_PLACEHOLDER_B', 'FUTURE_APPLET_MODULE_PLACEHOLDER_C',
] as const;
export const AllocationStatusEnum = [
  'UNKNOWN', 'PENDING', 'RUNNING', 'FAILED', 'SUCCEEDED', 'DISCONNECTED',
] as const;
export const ClassificationSpecificEnum = [
  'UNKNOWN', 'csx', 'cs', 'html', 'htm', 'shtml', 'xhtml', 'hs', 'hs-boot', 'hsig', 'cpp', 'cc',
  'cp', 'cxx', 'c', 'h', 'hh', 'hpp', 'hxx', 'inl', 'ipp', 'ixx', 'cppm', 'csv', 'doc', 'docm',
  'docx', 'exe', 'gif', 'ico', 'jpe', 'jpeg', 'jpg', 'jpgm', 'jpgv', 'log', 'mp2', 'mp2a', 'mp3',
  'mp4', 'mp4a', 'oga', 'ogg', 'ogv', 'ogx', 'ppt', 'pptx', 'pptm', 'qt', 'text', 'tif', 'tiff',
  'txt', 'wav', 'weba', 'webm', 'webp', 'xla', 'xlam', 'xlc', 'xlm', 'xls', 'xlsb', 'xlsm', 'xlsx',
  'xlt', 'xltm', 'xltx', 'pdf', 'png', 'rpm', 'zip', 'woff', 'woff2', 'svgz', 'bin', 'bmp', 'eot',
  'gz', 'jar', 'mpkg', 'ai', 'eps', 'dmg', 'list', 'rtx', 'uri', 'uris', 'urls', 'css', 'dart',
  'java', 'bsh', 'js', 'jsx', 'mjs', 'htc', 'json', 'ipynb', 'gltf', 'jsonml', 'ps', 'ssml', 'wasm',
  'rtf', 'cco', 'pl', 'pc', 'pm', 'pmc', 'pod', 't', 'xml', 'tld', 'dtml', 'rng', 'rss', 'opml',
  'svg', 'xaml', 'sublime-snippet', 'tmLanguage', 'tmPreferences', 'tmSnippet', 'tmTheme', 'csproj',
  'fsproj', 'sqlproj', 'vbproj', 'vcproj', 'vcxproj', 'dae', 'props', 'targets', 'xsd', 'xsl',
  'xslt', 'ecma', 'node', 'php', 'php3', 'php4', 'php5', 'php7', 'php8', 'phps', 'phpt', 'phtml',
  'py', 'py3', 'pyw', 'pyi', 'pyx', 'pyx.in', 'pxd', 'pxd.in', 'pxi', 'pxi.in', 'rpy', 'cpy', 'gyp',
  'gypi', 'vpy', 'smk', 'wscript', 'bazel', 'bzl', 'pyc', 'class', 'p', 'pas', 'curl', 'mcurl',
  'go', 'swift', 'rs', 'ts', 'tsx', 'rb', 'rbi', 'rbx', 'rjs', 'rabl', 'rake', 'capfile',
  'jbuilder', 'gemspec', 'podspec', 'irbrc', 'pryrc', 'prawn', 'thor', 'Appfile', 'Appraisals',
  'Berksfile', 'Brewfile', 'Cheffile', 'Deliverfile', 'Fastfile', 'Gemfile', 'Guardfile', 'Podfile',
  'Rakefile', 'Rantfile', 'Scanfile', 'simplecov', 'Snapfile', 'Thorfile', 'Vagrantfile', 'scala',
  'sbt', 'sc', 'cmd', 'bat', 'coffee', 'erl', 'hrl', 'escript', 'lua', 'luau', 'md', 'mdown',
  'mdwn', 'markdown', 'markdn', 'matlab', 'm', 'ps1', 'sh', 'bash', 'bashrc', 'ash', 'zsh',
  '.bash_aliases', '.bash_completions', '.bash_functions', '.bash_login', '.bash_logout',
  '.bash_profile', '.bash_variables', '.profile', '.textmate_init', '.zlogin', '.zlogout',
  '.zprofile', '.zshenv', '.zshrc', 'PKGBUILD', 'ebuild', 'eclass', 'r', 'sql', 'ddl', 'dml', 'tex',
  'ltx', 'sty', 'cls', 'yaml', 'yml', 'toml', 'tml', 'Cargo.lock', 'Gopkg.lock', 'Pipfile',
  'poetry.lock', 'uniform_resource_locator', 'custom_url_scheme', 'unix_file_path',
  'windows_file_path', 'uniform_resource_identifier', 'hljs-1c', 'hljs-abnf', 'hljs-accesslog',
  'hljs-actionscript', 'hljs-ada', 'hljs-angelscript', 'hljs-apache', 'hljs-applescript',
  'hljs-arcade', 'hljs-arduino', 'hljs-armasm', 'hljs-asciidoc', 'hljs-aspectj', 'hljs-autohotkey',
  'hljs-autoit', 'hljs-avrasm', 'hljs-awk', 'hljs-axapta', 'hljs-bash', 'hljs-basic', 'hljs-bnf',
  'hljs-brainfuck', 'hljs-cal', 'hljs-capnproto', 'hljs-ceylon', 'hljs-clean', 'hljs-clojure-repl',
  'hljs-clojure', 'hljs-cmake', 'hljs-coffeescript', 'hljs-coq', 'hljs-cos', 'hljs-cpp',
  'hljs-crmsh', 'hljs-crystal', 'hljs-c', 'hljs-cs', 'hljs-csp', 'hljs-css', 'hljs-d', 'hljs-dart',
  'hljs-delphi', 'hljs-diff', 'hljs-django', 'hljs-dns', 'hljs-dockerfile', 'hljs-dos',
  'hljs-dsconfig', 'hljs-dts', 'hljs-dust', 'hljs-ebnf', 'hljs-elixir', 'hljs-elm', 'hljs-erb',
  'hljs-erlang-repl', 'hljs-erlang', 'hljs-excel', 'hljs-fix', 'hljs-flix', 'hljs-fortran',
  'hljs-fsharp', 'hljs-gams', 'hljs-gauss', 'hljs-gcode', 'hljs-gherkin', 'hljs-glsl', 'hljs-gml',
  'hljs-go', 'hljs-golo', 'hljs-gradle', 'hljs-groovy', 'hljs-haml', 'hljs-handlebars',
  'hljs-haskell', 'hljs-haxe', 'hljs-hsp', 'hljs-htmlbars', 'hljs-http', 'hljs-hy', 'hljs-inform7',
  'hljs-ini', 'hljs-irpf90', 'hljs-isbl', 'hljs-java', 'hljs-javascript', 'hljs-jboss-cli',
  'hljs-json', 'hljs-julia-repl', 'hljs-julia', 'hljs-kotlin', 'hljs-lasso', 'hljs-ldif',
  'hljs-leaf', 'hljs-less', 'hljs-lisp', 'hljs-livecodeserver', 'hljs-livescript', 'hljs-llvm',
  'hljs-lsl', 'hljs-lua', 'hljs-makefile', 'hljs-markdown', 'hljs-mathematica', 'hljs-matlab',
  'hljs-maxima', 'hljs-mel', 'hljs-mercury', 'hljs-mipsasm', 'hljs-mizar', 'hljs-mojolicious',
  'hljs-monkey', 'hljs-moonscript', 'hljs-n1ql', 'hljs-nginx', 'hljs-nimrod', 'hljs-nix',
  'hljs-nsis', 'hljs-objectivec', 'hljs-ocaml', 'hljs-openscad', 'hljs-oxygene', 'hljs-parser3',
  'hljs-perl', 'hljs-pf', 'hljs-pgsql', 'hljs-php', 'hljs-plaintext', 'hljs-pony',
  'hljs-powershell', 'hljs-processing', 'hljs-profile', 'hljs-prolog', 'hljs-properties',
  'hljs-protobuf', 'hljs-puppet', 'hljs-purebasic', 'hljs-python', 'hljs-q', 'hljs-qml', 'hljs-r',
  'hljs-reasonml', 'hljs-rib', 'hljs-roboconf', 'hljs-routeros', 'hljs-rsl', 'hljs-ruby',
  'hljs-ruleslanguage', 'hljs-rust', 'hljs-sas', 'hljs-scala', 'hljs-scheme', 'hljs-scilab',
  'hljs-scss', 'hljs-shell', 'hljs-smali', 'hljs-smalltalk', 'hljs-sml', 'hljs-sqf', 'hljs-sql',
  'hljs-stan', 'hljs-stata', 'hljs-step21', 'hljs-stylus', 'hljs-subunit', 'hljs-swift',
  'hljs-taggerscript', 'hljs-tap', 'hljs-tcl', 'hljs-tex', 'hljs-thrift', 'hljs-tp', 'hljs-twig',
  'hljs-typescript', 'hljs-vala', 'hljs-vbnet', 'hljs-vbscript-html', 'hljs-vbscript',
  'hljs-verilog', 'hljs-vhdl', 'hljs-vim', 'hljs-x86asm', 'hljs-xl', 'hljs-xml', 'hljs-xquery',
  'hljs-yaml', 'hljs-toml', 'hljs-zephir', 'hljs-html', 'groovy', 'kt', 'el', 'clj', 'ex', 'adb',
  'ads', 'agda', 'elm', 'exs', 'glsl', 'ml', 'lean', 'lisp', 'rkt', 'sparql', 'vhdl', 'zig',
  'dockerfile', 'f03', 'f08', 'f18', 'f90', 'f95', 'jl', 'mm', 'scm', 'sol', 'sv', 'asp', 'cfm',
  'fs', 'fsi', 'fsx', 'tf', 'vba', 'svelte', 'vue', 'scss', 'feature', 'ini', 'ftl', 'hcl', 'abap',
  'nim', 'cara',
] as const;
export const ClassificationGenericEnum = [
  'UNKNOWN', 'CODE', 'TEXT', 'IMAGE', 'VIDEO', 'EXTERNAL_RESOURCE_REFERENCE', 'FILE',
] as const;
export const ClassificationRenderingEnum = [
  'UNKNOWN', 'HTML', 'TWENTY_FOUR_BIT_ANSI_ESCAPED_SEQUENCES', 'HIGHLIGHT_JS_HTML',
] as const;
export const RoleEnum = ['UNKNOWN', 'ORIGINAL', 'ADDITIONAL', 'BOTH', 'PREVIEW'] as const;
export const TagCategoryEnum = ['UNKNOWN', 'HANDLE', 'EMAIL'] as const;
export const SeedTypeEnum = ['UNKNOWN', 'SEEDED_FORMAT', 'SEEDED_ASSET'] as const;

export type ApplicationName = (typeof ApplicationNameEnum)[number];
export type ModelFoundation = (typeof ModelFoundationEnum)[number];
export type ExternalMLProvider = (typeof ExternalMLProviderEnum)[number];
export type ModelDownloadProgressStatus = (typeof ModelDownloadProgressStatusEnum)[number];
export type Platform = (typeof PlatformEnum)[number];
export type Privacy = (typeof PrivacyEnum)[number];
export type ConversationType = (typeof ConversationTypeEnum)[number];
export type MessageRole = (typeof MessageRoleEnum)[number];
