# ruff: noqa: E501, RUF001  (sentences of data: one a line; other scripts' punctuation)
"""Short turns in 15 languages written for recallwise (third round; source ids ``rw-written-small``
and ``rw-written-life-ml``).

``NEGATIVES`` (source ``rw-written-small``): greetings, thanks, goodbyes, small talk about the
assistant, yes / no, arithmetic and general-knowledge questions, follow-ons inside a task. The
message carries everything the answer needs; the user's memory adds nothing.

``POSITIVES`` (source ``rw-written-life-ml``): questions about the user's own life and the people in
it (a relative's birthday, what a friend said, what the user told the assistant, where they stayed
last time): only the user's stored memory answers them.

Each concept is one sentence meaning written in every language (not word-for-word translations:
what a speaker of each would type); a concept with all its languages is one *group*, so a sentence
and its translations share a split. Arithmetic concepts take their numbers from a generator seeded
by the concept and language (``NUMBERS``).
"""

from __future__ import annotations

LANGS = ("ar", "de", "en", "es", "fr", "it", "ja", "ko", "nl", "pl", "pt", "ru", "th", "tr", "zh")

# concept -> (kind, {lang: [variants]})
NEGATIVES: dict[str, tuple[str, dict[str, list[str]]]] = {
    "hello": ("greeting", {
        "ar": ["مرحبا!", "أهلاً"], "de": ["Hallo!", "Hi, na?"], "en": ["Hello!", "hiya"],
        "es": ["¡Hola!", "hola buenas"], "fr": ["Salut !", "Bonjour"], "it": ["Ciao!", "Salve"],
        "ja": ["こんにちは！", "やあ"], "ko": ["안녕하세요!", "안녕"], "nl": ["Hallo!", "Hoi"],
        "pl": ["Cześć!", "Dzień dobry"], "pt": ["Olá!", "Oi, tudo bem?"], "ru": ["Привет!", "Здравствуйте"],
        "th": ["สวัสดีครับ", "สวัสดีค่ะ"], "tr": ["Merhaba!", "Selam"], "zh": ["你好！", "嗨"],
    }),
    "good_morning": ("greeting", {
        "ar": ["صباح الخير"], "de": ["Guten Morgen!"], "en": ["Good morning!"], "es": ["¡Buenos días!"],
        "fr": ["Bonjour, bonne matinée !"], "it": ["Buongiorno!"], "ja": ["おはようございます"],
        "ko": ["좋은 아침이에요"], "nl": ["Goedemorgen!"], "pl": ["Dzień dobry, miłego poranka!"],
        "pt": ["Bom dia!"], "ru": ["Доброе утро!"], "th": ["อรุณสวัสดิ์"], "tr": ["Günaydın!"], "zh": ["早上好！"],
    }),
    "good_evening": ("greeting", {
        "ar": ["مساء الخير"], "de": ["Guten Abend"], "en": ["good evening"], "es": ["Buenas noches"],
        "fr": ["Bonsoir !"], "it": ["Buonasera"], "ja": ["こんばんは"], "ko": ["좋은 저녁이에요"],
        "nl": ["Goedenavond"], "pl": ["Dobry wieczór"], "pt": ["Boa noite!"], "ru": ["Добрый вечер"],
        "th": ["สวัสดีตอนเย็น"], "tr": ["İyi akşamlar"], "zh": ["晚上好"],
    }),
    "how_are_you": ("chat", {
        "ar": ["كيف حالك؟"], "de": ["Wie geht's dir?"], "en": ["How are you doing today?"],
        "es": ["¿Qué tal estás?"], "fr": ["Ça va ?", "Comment vas-tu ?"], "it": ["Come stai?"],
        "ja": ["元気ですか？"], "ko": ["잘 지내?", "오늘 기분 어때요?"], "nl": ["Hoe gaat het met je?"],
        "pl": ["Jak się masz?", "Co słychać?"], "pt": ["Como você está?"], "ru": ["Как дела?"],
        "th": ["สบายดีไหม"], "tr": ["Nasılsın?", "Naber?"], "zh": ["你好吗？"],
    }),
    "thanks": ("thanks", {
        "ar": ["شكراً!", "شكرا جزيلا"], "de": ["Danke!", "Vielen Dank"], "en": ["Thanks!", "thank you"],
        "es": ["¡Gracias!", "Muchas gracias"], "fr": ["Merci !", "Merci beaucoup"], "it": ["Grazie!", "Grazie mille"],
        "ja": ["ありがとう！", "ありがとうございます"], "ko": ["고마워요!", "감사합니다"], "nl": ["Bedankt!", "Dank je wel"],
        "pl": ["Dzięki!", "Dziękuję bardzo"], "pt": ["Obrigado!", "Valeu"], "ru": ["Спасибо!", "Большое спасибо"],
        "th": ["ขอบคุณครับ", "ขอบใจนะ"], "tr": ["Teşekkürler!", "Çok teşekkür ederim"], "zh": ["谢谢！", "多谢"],
    }),
    "thanks_helped": ("thanks", {
        "ar": ["شكراً، هذا ساعدني كثيراً"], "de": ["Danke, das hat mir sehr geholfen."],
        "en": ["Thanks, that really helped."], "es": ["Gracias, me ha servido mucho."],
        "fr": ["Merci, ça m'a bien aidé."], "it": ["Grazie, mi è stato molto utile."],
        "ja": ["ありがとう、とても助かりました。"], "ko": ["고마워요, 정말 도움이 됐어요."],
        "nl": ["Bedankt, dat heeft echt geholpen."], "pl": ["Dzięki, bardzo mi to pomogło."],
        "pt": ["Obrigada, isso ajudou muito."], "ru": ["Спасибо, это очень помогло."],
        "th": ["ขอบคุณ ช่วยได้มากเลย"], "tr": ["Teşekkürler, çok işime yaradı."], "zh": ["谢谢，这很有帮助。"],
    }),
    "perfect": ("thanks", {
        "ar": ["ممتاز، شكراً"], "de": ["Perfekt, danke!"], "en": ["perfect, cheers"], "es": ["¡Perfecto, gracias!"],
        "fr": ["Parfait, merci !"], "it": ["Perfetto, grazie!"], "ja": ["完璧です、ありがとう"], "ko": ["완벽해요, 고마워요"],
        "nl": ["Perfect, dank je!"], "pl": ["Super, dzięki!"], "pt": ["Perfeito, obrigado!"], "ru": ["Отлично, спасибо!"],
        "th": ["เยี่ยมเลย ขอบคุณ"], "tr": ["Harika, sağ ol!"], "zh": ["太好了，谢谢！"],
    }),
    "bye": ("greeting", {
        "ar": ["مع السلامة", "إلى اللقاء"], "de": ["Tschüss!", "Bis morgen!"], "en": ["Bye, see you tomorrow!"],
        "es": ["¡Adiós!", "Hasta mañana"], "fr": ["Au revoir !", "À demain !"], "it": ["Ciao, a domani!"],
        "ja": ["さようなら", "またね"], "ko": ["안녕히 계세요", "내일 봐요"], "nl": ["Doei!", "Tot morgen!"],
        "pl": ["Do widzenia!", "Na razie!"], "pt": ["Tchau!", "Até amanhã!"], "ru": ["Пока!", "До завтра!"],
        "th": ["ลาก่อน", "แล้วเจอกันพรุ่งนี้"], "tr": ["Hoşça kal!", "Görüşürüz"], "zh": ["再见！", "明天见"],
    }),
    "good_night": ("greeting", {
        "ar": ["تصبح على خير"], "de": ["Gute Nacht!"], "en": ["good night!"], "es": ["Buenas noches, hasta luego"],
        "fr": ["Bonne nuit !"], "it": ["Buonanotte!"], "ja": ["おやすみなさい"], "ko": ["잘 자요"],
        "nl": ["Welterusten!"], "pl": ["Dobranoc!"], "pt": ["Boa noite, até mais"], "ru": ["Спокойной ночи!"],
        "th": ["ฝันดีนะ"], "tr": ["İyi geceler!"], "zh": ["晚安！"],
    }),
    "your_name": ("chat", {
        "ar": ["ما اسمك؟"], "de": ["Wie heißt du?"], "en": ["What's your name?"], "es": ["¿Cómo te llamas?"],
        "fr": ["Comment tu t'appelles ?"], "it": ["Come ti chiami?"], "ja": ["あなたの名前は何ですか？"],
        "ko": ["너 이름이 뭐야?"], "nl": ["Hoe heet jij?"], "pl": ["Jak masz na imię?"], "pt": ["Qual é o seu nome?"],
        "ru": ["Как тебя зовут?"], "th": ["คุณชื่ออะไร"], "tr": ["Senin adın ne?"], "zh": ["你叫什么名字？"],
    }),
    "are_you_bot": ("chat", {
        "ar": ["هل أنت روبوت؟"], "de": ["Bist du ein Bot?"], "en": ["are you a real person or a bot?"],
        "es": ["¿Eres un robot?"], "fr": ["Tu es un robot ?"], "it": ["Sei un bot?"], "ja": ["あなたはロボットですか？"],
        "ko": ["너 로봇이야?"], "nl": ["Ben je een robot?"], "pl": ["Jesteś botem?"], "pt": ["Você é um robô?"],
        "ru": ["Ты бот?"], "th": ["คุณเป็นหุ่นยนต์หรือเปล่า"], "tr": ["Sen bir robot musun?"], "zh": ["你是机器人吗？"],
    }),
    "joke": ("creative", {
        "ar": ["قل لي نكتة"], "de": ["Erzähl mir einen Witz."], "en": ["Tell me a joke."], "es": ["Cuéntame un chiste."],
        "fr": ["Raconte-moi une blague."], "it": ["Raccontami una barzelletta."], "ja": ["何か面白い話をして"],
        "ko": ["농담 하나 해줘"], "nl": ["Vertel eens een mop."], "pl": ["Opowiedz mi dowcip."],
        "pt": ["Me conta uma piada."], "ru": ["Расскажи анекдот."], "th": ["เล่าเรื่องตลกให้ฟังหน่อย"],
        "tr": ["Bana bir fıkra anlat."], "zh": ["给我讲个笑话。"],
    }),
    "ok": ("follow-on", {
        "ar": ["حسناً", "تمام"], "de": ["Okay.", "Alles klar"], "en": ["ok", "got it"], "es": ["Vale.", "Entendido"],
        "fr": ["D'accord.", "OK, compris"], "it": ["Va bene.", "Ok, capito"], "ja": ["わかりました", "了解"],
        "ko": ["알겠어요", "네 알겠습니다"], "nl": ["Oké.", "Begrepen"], "pl": ["Dobra.", "Rozumiem"],
        "pt": ["Tá bom.", "Entendi"], "ru": ["Хорошо.", "Понятно"], "th": ["โอเค", "เข้าใจแล้ว"],
        "tr": ["Tamam.", "Anladım"], "zh": ["好的", "明白了"],
    }),
    "yes_please": ("follow-on", {
        "ar": ["نعم، من فضلك"], "de": ["Ja, bitte."], "en": ["yes please"], "es": ["Sí, por favor."],
        "fr": ["Oui, s'il te plaît."], "it": ["Sì, grazie."], "ja": ["はい、お願いします"], "ko": ["네, 부탁해요"],
        "nl": ["Ja, graag."], "pl": ["Tak, poproszę."], "pt": ["Sim, por favor."], "ru": ["Да, пожалуйста."],
        "th": ["ใช่ครับ ช่วยด้วย"], "tr": ["Evet, lütfen."], "zh": ["是的，麻烦了"],
    }),
    "no_thanks": ("follow-on", {
        "ar": ["لا، شكراً"], "de": ["Nein, danke."], "en": ["no thanks, that's all"], "es": ["No, gracias."],
        "fr": ["Non merci, c'est tout."], "it": ["No, grazie."], "ja": ["いいえ、大丈夫です"], "ko": ["아니요, 괜찮아요"],
        "nl": ["Nee, dank je."], "pl": ["Nie, dziękuję."], "pt": ["Não, obrigado."], "ru": ["Нет, спасибо."],
        "th": ["ไม่เป็นไรครับ"], "tr": ["Hayır, teşekkürler."], "zh": ["不用了，谢谢"],
    }),
    "continue": ("follow-on", {
        "ar": ["أكمل"], "de": ["Mach weiter."], "en": ["go on"], "es": ["Sigue, por favor."], "fr": ["Continue."],
        "it": ["Continua."], "ja": ["続けてください"], "ko": ["계속해 줘"], "nl": ["Ga door."], "pl": ["Kontynuuj."],
        "pt": ["Continue."], "ru": ["Продолжай."], "th": ["ต่อเลย"], "tr": ["Devam et."], "zh": ["继续。"],
    }),
    "shorter": ("follow-on", {
        "ar": ["اختصره من فضلك"], "de": ["Kürzer, bitte."], "en": ["can you make that shorter"],
        "es": ["Hazlo más corto."], "fr": ["Fais plus court."], "it": ["Rendilo più breve."], "ja": ["もっと短くして"],
        "ko": ["더 짧게 해 줘"], "nl": ["Maak het korter."], "pl": ["Skróć to."], "pt": ["Deixa mais curto."],
        "ru": ["Сделай короче."], "th": ["ช่วยทำให้สั้นลงหน่อย"], "tr": ["Daha kısa yaz."], "zh": ["写短一点。"],
    }),
    "simpler": ("follow-on", {
        "ar": ["اشرح ذلك بطريقة أبسط"], "de": ["Erklär das nochmal einfacher."], "en": ["Explain that again, but simpler."],
        "es": ["Explícalo más fácil."], "fr": ["Explique-le plus simplement."], "it": ["Spiegalo in modo più semplice."],
        "ja": ["もっと簡単に説明して"], "ko": ["좀 더 쉽게 설명해 줘"], "nl": ["Leg het eenvoudiger uit."],
        "pl": ["Wyjaśnij to prościej."], "pt": ["Explica de um jeito mais simples."], "ru": ["Объясни попроще."],
        "th": ["อธิบายให้ง่ายกว่านี้หน่อย"], "tr": ["Bunu daha basit anlat."], "zh": ["再简单地解释一下。"],
    }),
    "another_example": ("follow-on", {
        "ar": ["أعطني مثالاً آخر"], "de": ["Gib mir noch ein Beispiel."], "en": ["another example please"],
        "es": ["Dame otro ejemplo."], "fr": ["Donne-moi un autre exemple."], "it": ["Dammi un altro esempio."],
        "ja": ["別の例を挙げて"], "ko": ["다른 예시 하나 더"], "nl": ["Geef nog een voorbeeld."],
        "pl": ["Podaj jeszcze jeden przykład."], "pt": ["Me dá outro exemplo."], "ru": ["Приведи ещё один пример."],
        "th": ["ขอตัวอย่างอีกอัน"], "tr": ["Bir örnek daha ver."], "zh": ["再举一个例子。"],
    }),
    "as_list": ("follow-on", {
        "ar": ["اكتبها كقائمة"], "de": ["Schreib das als Liste."], "en": ["put that in a bulleted list"],
        "es": ["Ponlo en una lista."], "fr": ["Mets ça sous forme de liste."], "it": ["Fammelo come elenco."],
        "ja": ["箇条書きにして"], "ko": ["목록으로 정리해 줘"], "nl": ["Zet het in een lijstje."],
        "pl": ["Zrób z tego listę."], "pt": ["Coloca em forma de lista."], "ru": ["Оформи списком."],
        "th": ["เขียนเป็นข้อ ๆ ให้หน่อย"], "tr": ["Bunu madde madde yaz."], "zh": ["列成清单。"],
    }),
    "translate_english": ("follow-on", {
        "ar": ["ترجم هذا إلى الإنجليزية"], "de": ["Übersetz das ins Englische."], "en": ["now translate it into Spanish"],
        "es": ["Tradúcelo al inglés."], "fr": ["Traduis ça en anglais."], "it": ["Traducilo in inglese."],
        "ja": ["それを英語に訳して"], "ko": ["그거 영어로 번역해 줘"], "nl": ["Vertaal het naar het Engels."],
        "pl": ["Przetłumacz to na angielski."], "pt": ["Traduz isso para o inglês."], "ru": ["Переведи это на английский."],
        "th": ["แปลเป็นภาษาอังกฤษให้หน่อย"], "tr": ["Bunu İngilizceye çevir."], "zh": ["把它翻译成英文。"],
    }),
    "capital": ("fact", {
        "ar": ["ما هي عاصمة أستراليا؟"], "de": ["Was ist die Hauptstadt von Kanada?"], "en": ["what's the capital of Peru"],
        "es": ["¿Cuál es la capital de Noruega?"], "fr": ["Quelle est la capitale de l'Australie ?"],
        "it": ["Qual è la capitale del Giappone?"], "ja": ["カナダの首都はどこですか？"], "ko": ["호주의 수도는 어디야?"],
        "nl": ["Wat is de hoofdstad van Brazilië?"], "pl": ["Jaka jest stolica Kanady?"], "pt": ["Qual é a capital da Austrália?"],
        "ru": ["Какая столица у Канады?"], "th": ["เมืองหลวงของออสเตรเลียคืออะไร"], "tr": ["Kanada'nın başkenti neresi?"],
        "zh": ["澳大利亚的首都是哪里？"],
    }),
    "leap_year": ("fact", {
        "ar": ["كم يوماً في السنة الكبيسة؟"], "de": ["Wie viele Tage hat ein Schaltjahr?"], "en": ["How many days are in a leap year?"],
        "es": ["¿Cuántos días tiene un año bisiesto?"], "fr": ["Combien de jours dans une année bissextile ?"],
        "it": ["Quanti giorni ha un anno bisestile?"], "ja": ["うるう年は何日ありますか？"], "ko": ["윤년은 며칠이야?"],
        "nl": ["Hoeveel dagen heeft een schrikkeljaar?"], "pl": ["Ile dni ma rok przestępny?"],
        "pt": ["Quantos dias tem um ano bissexto?"], "ru": ["Сколько дней в високосном году?"],
        "th": ["ปีอธิกสุรทินมีกี่วัน"], "tr": ["Artık yılda kaç gün var?"], "zh": ["闰年有多少天？"],
    }),
    "boiling_point": ("fact", {
        "ar": ["عند أي درجة يغلي الماء؟"], "de": ["Bei wie viel Grad kocht Wasser?"], "en": ["at what temperature does water boil"],
        "es": ["¿A qué temperatura hierve el agua?"], "fr": ["À quelle température l'eau bout-elle ?"],
        "it": ["A che temperatura bolle l'acqua?"], "ja": ["水は何度で沸騰しますか？"], "ko": ["물은 몇 도에서 끓어?"],
        "nl": ["Bij welke temperatuur kookt water?"], "pl": ["W jakiej temperaturze wrze woda?"],
        "pt": ["A que temperatura a água ferve?"], "ru": ["При какой температуре кипит вода?"],
        "th": ["น้ำเดือดที่กี่องศา"], "tr": ["Su kaç derecede kaynar?"], "zh": ["水在多少度沸腾？"],
    }),
    "who_wrote": ("fact", {
        "ar": ["من كتب رواية الحرب والسلام؟"], "de": ["Wer hat den Faust geschrieben?"], "en": ["who wrote Don Quixote?"],
        "es": ["¿Quién escribió Cien años de soledad?"], "fr": ["Qui a écrit Les Misérables ?"],
        "it": ["Chi ha scritto la Divina Commedia?"], "ja": ["「源氏物語」を書いたのは誰ですか？"], "ko": ["토지를 쓴 작가는 누구야?"],
        "nl": ["Wie schreef Het Achterhuis?"], "pl": ["Kto napisał Pana Tadeusza?"], "pt": ["Quem escreveu Dom Casmurro?"],
        "ru": ["Кто написал «Войну и мир»?"], "th": ["ใครแต่งเรื่องขุนช้างขุนแผน"], "tr": ["Çalıkuşu'nu kim yazdı?"],
        "zh": ["《红楼梦》的作者是谁？"],
    }),
}

# arithmetic concepts: {a}, {b} filled from NUMBERS (two fillings per language)
ARITHMETIC: dict[str, dict[str, str]] = {
    "plus": {
        "ar": "كم يساوي {a} + {b}؟", "de": "Was ist {a} plus {b}?", "en": "what is {a} plus {b}",
        "es": "¿Cuánto es {a} más {b}?", "fr": "Combien font {a} plus {b} ?", "it": "Quanto fa {a} più {b}?",
        "ja": "{a}足す{b}はいくつ？", "ko": "{a} 더하기 {b}는?", "nl": "Hoeveel is {a} plus {b}?",
        "pl": "Ile to jest {a} plus {b}?", "pt": "Quanto é {a} mais {b}?", "ru": "Сколько будет {a} плюс {b}?",
        "th": "{a} บวก {b} เท่ากับเท่าไร", "tr": "{a} artı {b} kaç eder?", "zh": "{a}加{b}等于多少？",
    },
    "times": {
        "ar": "اضرب {a} في {b}", "de": "{a} mal {b}?", "en": "{a} x {b} = ?", "es": "{a} por {b}, ¿cuánto da?",
        "fr": "Combien font {a} fois {b} ?", "it": "{a} per {b} quanto fa?", "ja": "{a}かける{b}は？",
        "ko": "{a} 곱하기 {b} 얼마야?", "nl": "Wat is {a} keer {b}?", "pl": "Ile to {a} razy {b}?",
        "pt": "{a} vezes {b} dá quanto?", "ru": "{a} умножить на {b}", "th": "{a} คูณ {b} ได้เท่าไร",
        "tr": "{a} çarpı {b} kaç?", "zh": "{a}乘以{b}是多少？",
    },
    "minus": {
        "ar": "ما ناتج {a} ناقص {b}؟", "de": "Rechne {a} minus {b}.", "en": "calculate {a} minus {b}",
        "es": "Calcula {a} menos {b}.", "fr": "Calcule {a} moins {b}.", "it": "Calcola {a} meno {b}.",
        "ja": "{a}引く{b}を計算して", "ko": "{a} 빼기 {b} 계산해 줘", "nl": "Reken {a} min {b} uit.",
        "pl": "Oblicz {a} minus {b}.", "pt": "Calcule {a} menos {b}.", "ru": "Посчитай {a} минус {b}.",
        "th": "ช่วยคำนวณ {a} ลบ {b}", "tr": "{a} eksi {b} hesapla.", "zh": "算一下{a}减{b}。",
    },
    "divide": {
        "ar": "كم يساوي {a} مقسوماً على {b}؟", "de": "Wie viel ist {a} geteilt durch {b}?", "en": "What's {a} divided by {b}?",
        "es": "¿Cuánto es {a} entre {b}?", "fr": "{a} divisé par {b}, ça fait combien ?", "it": "Quanto fa {a} diviso {b}?",
        "ja": "{a}割る{b}は？", "ko": "{a} 나누기 {b}는 얼마예요?", "nl": "{a} gedeeld door {b}?",
        "pl": "Ile to jest {a} podzielone przez {b}?", "pt": "Quanto é {a} dividido por {b}?", "ru": "Сколько будет {a} разделить на {b}?",
        "th": "{a} หาร {b} ได้เท่าไหร่", "tr": "{a} bölü {b} kaç eder?", "zh": "{a}除以{b}等于几？",
    },
    "percent": {
        "ar": "كم يساوي {b}٪ من {a}؟", "de": "Wie viel sind {b} % von {a}?", "en": "what's {b}% of {a}",
        "es": "¿Cuánto es el {b} % de {a}?", "fr": "Combien font {b} % de {a} ?", "it": "Quanto è il {b}% di {a}?",
        "ja": "{a}の{b}%はいくつ？", "ko": "{a}의 {b}%는 얼마야?", "nl": "Hoeveel is {b} procent van {a}?",
        "pl": "Ile to {b}% z {a}?", "pt": "Quanto é {b}% de {a}?", "ru": "Сколько будет {b}% от {a}?",
        "th": "{b}% ของ {a} เท่ากับเท่าไร", "tr": "{a} sayısının yüzde {b}'si kaç?", "zh": "{a}的{b}%是多少？",
    },
}
NUMBERS = ((12, 480), (3, 99))  # ranges of a and b for the fillings

# concept -> (kind, {lang: [variants]})
POSITIVES: dict[str, tuple[str, dict[str, list[str]]]] = {
    "sister_birthday": ("recall", {
        "ar": ["متى عيد ميلاد أختي؟"], "de": ["Wann hat meine Schwester Geburtstag?"], "en": ["when's my sister's birthday again"],
        "es": ["¿Cuándo es el cumpleaños de mi hermana?"], "fr": ["C'est quand l'anniversaire de ma sœur ?"],
        "it": ["Quando è il compleanno di mia sorella?"], "ja": ["妹の誕生日っていつだっけ？"], "ko": ["우리 언니 생일이 언제였지?"],
        "nl": ["Wanneer is mijn zus jarig?"], "pl": ["Kiedy są urodziny mojej siostry?"], "pt": ["Quando é o aniversário da minha irmã?"],
        "ru": ["Когда день рождения у моей сестры?"], "th": ["วันเกิดน้องสาวฉันวันไหนนะ"], "tr": ["Kız kardeşimin doğum günü ne zamandı?"],
        "zh": ["我姐姐的生日是哪天来着？"],
    }),
    "told_diet": ("recall", {
        "ar": ["ماذا أخبرتك عن نظامي الغذائي؟"], "de": ["Was hab ich dir über meine Ernährung erzählt?"],
        "en": ["What did I tell you about my diet?"], "es": ["¿Qué te conté sobre mi dieta?"],
        "fr": ["Qu'est-ce que je t'ai dit sur mon régime ?"], "it": ["Cosa ti ho detto della mia dieta?"],
        "ja": ["私の食事制限について何て話したっけ？"], "ko": ["내 식단에 대해 내가 뭐라고 했었지?"],
        "nl": ["Wat heb ik je verteld over mijn dieet?"], "pl": ["Co ci mówiłam o mojej diecie?"],
        "pt": ["O que eu te contei sobre a minha dieta?"], "ru": ["Что я тебе рассказывал про свою диету?"],
        "th": ["ฉันเคยบอกอะไรเรื่องอาหารที่ฉันกินได้บ้าง"], "tr": ["Sana diyetim hakkında ne anlatmıştım?"],
        "zh": ["我跟你说过我的饮食有什么限制？"],
    }),
    "nephew_age": ("recall", {
        "ar": ["كم عمر ابن أخي الآن؟"], "de": ["Wie alt ist mein Neffe jetzt?"], "en": ["How old is my nephew now?"],
        "es": ["¿Cuántos años tiene mi sobrino ahora?"], "fr": ["Quel âge a mon neveu maintenant ?"],
        "it": ["Quanti anni ha adesso mio nipote?"], "ja": ["甥は今何歳だっけ？"], "ko": ["내 조카 지금 몇 살이지?"],
        "nl": ["Hoe oud is mijn neefje nu?"], "pl": ["Ile lat ma teraz mój bratanek?"], "pt": ["Quantos anos meu sobrinho tem agora?"],
        "ru": ["Сколько лет сейчас моему племяннику?"], "th": ["หลานชายฉันตอนนี้อายุเท่าไหร่แล้ว"],
        "tr": ["Yeğenim şimdi kaç yaşında?"], "zh": ["我侄子现在几岁了？"],
    }),
    "friend_said_party": ("people", {
        "ar": ["ماذا قالت ليلى عن الحفلة؟"], "de": ["Was hat Jana über die Party gesagt?"], "en": ["What did Priya say about the party?"],
        "es": ["¿Qué dijo Lucía de la fiesta?"], "fr": ["Qu'est-ce que Camille a dit à propos de la soirée ?"],
        "it": ["Cosa ha detto Giulia della festa?"], "ja": ["さくらはパーティーについて何て言ってた？"],
        "ko": ["지민이가 파티에 대해 뭐라고 했어?"], "nl": ["Wat zei Sanne over het feestje?"],
        "pl": ["Co Kasia mówiła o imprezie?"], "pt": ["O que a Bruna falou sobre a festa?"],
        "ru": ["Что Маша говорила про вечеринку?"], "th": ["นิดพูดว่าอะไรเรื่องปาร์ตี้"], "tr": ["Ayşe parti hakkında ne dedi?"],
        "zh": ["小林对那个聚会怎么说的？"],
    }),
    "remind_tomorrow": ("reminder", {
        "ar": ["ذكرني بما عليّ فعله غداً"], "de": ["Erinner mich, was ich morgen erledigen wollte."],
        "en": ["remind me what I wanted to do tomorrow"], "es": ["Recuérdame qué tenía que hacer mañana."],
        "fr": ["Rappelle-moi ce que je devais faire demain."], "it": ["Ricordami cosa dovevo fare domani."],
        "ja": ["明日やることを思い出させて"], "ko": ["내일 뭐 해야 했는지 알려줘"], "nl": ["Herinner me eraan wat ik morgen moest doen."],
        "pl": ["Przypomnij mi, co miałem jutro zrobić."], "pt": ["Me lembra o que eu tinha que fazer amanhã."],
        "ru": ["Напомни, что я собирался сделать завтра."], "th": ["เตือนหน่อยว่าพรุ่งนี้ฉันต้องทำอะไร"],
        "tr": ["Yarın ne yapmam gerektiğini hatırlat."], "zh": ["提醒我明天要做什么。"],
    }),
    "restaurant_last_time": ("recall", {
        "ar": ["ما اسم المطعم الذي أعجبنا في المرة الماضية؟"], "de": ["Wie hieß das Restaurant, das uns letztes Mal so gefallen hat?"],
        "en": ["which restaurant did we like last time we were in town"], "es": ["¿Cómo se llamaba el restaurante que nos gustó la última vez?"],
        "fr": ["C'était quoi le resto qu'on avait aimé la dernière fois ?"], "it": ["Come si chiamava il ristorante che ci è piaciuto l'ultima volta?"],
        "ja": ["前回気に入ったレストランの名前は？"], "ko": ["지난번에 우리가 좋아했던 식당 이름이 뭐였지?"],
        "nl": ["Hoe heette dat restaurant dat we vorige keer zo leuk vonden?"], "pl": ["Jak się nazywała ta restauracja, która nam się ostatnio podobała?"],
        "pt": ["Qual era o restaurante que a gente gostou da última vez?"], "ru": ["Как назывался ресторан, который нам понравился в прошлый раз?"],
        "th": ["ร้านอาหารที่เราชอบครั้งที่แล้วชื่ออะไรนะ"], "tr": ["Geçen sefer beğendiğimiz restoranın adı neydi?"],
        "zh": ["上次我们很喜欢的那家餐厅叫什么？"],
    }),
    "dentist_name": ("recall", {
        "ar": ["ما اسم طبيب أسناني؟"], "de": ["Wie heißt nochmal mein Zahnarzt?"], "en": ["What's my dentist called?"],
        "es": ["¿Cómo se llama mi dentista?"], "fr": ["Comment s'appelle mon dentiste déjà ?"], "it": ["Come si chiama il mio dentista?"],
        "ja": ["私の歯医者さんの名前は？"], "ko": ["내 치과 의사 이름이 뭐였지?"], "nl": ["Hoe heet mijn tandarts ook alweer?"],
        "pl": ["Jak się nazywa mój dentysta?"], "pt": ["Qual é o nome do meu dentista?"], "ru": ["Как зовут моего стоматолога?"],
        "th": ["หมอฟันของฉันชื่ออะไร"], "tr": ["Diş hekimimin adı neydi?"], "zh": ["我的牙医叫什么名字？"],
    }),
    "gift_mother_last_year": ("recall", {
        "ar": ["ماذا أهديت أمي في عيد ميلادها العام الماضي؟"], "de": ["Was hab ich meiner Mutter letztes Jahr zum Geburtstag geschenkt?"],
        "en": ["What did I get my mum for her birthday last year?"], "es": ["¿Qué le regalé a mi madre el año pasado por su cumpleaños?"],
        "fr": ["Qu'est-ce que j'ai offert à ma mère pour son anniversaire l'an dernier ?"],
        "it": ["Cosa ho regalato a mia madre per il compleanno l'anno scorso?"], "ja": ["去年の母の誕生日に何をあげたっけ？"],
        "ko": ["작년 엄마 생신 때 내가 뭘 선물했지?"], "nl": ["Wat heb ik mijn moeder vorig jaar voor haar verjaardag gegeven?"],
        "pl": ["Co dałem mamie na urodziny w zeszłym roku?"], "pt": ["O que eu dei pra minha mãe no aniversário do ano passado?"],
        "ru": ["Что я подарил маме на день рождения в прошлом году?"], "th": ["ปีที่แล้วฉันให้ของขวัญวันเกิดอะไรแม่"],
        "tr": ["Geçen yıl annemin doğum gününde ona ne almıştım?"], "zh": ["去年我妈生日我送了她什么？"],
    }),
    "last_doctor": ("recall", {
        "ar": ["متى زرت الطبيب آخر مرة؟"], "de": ["Wann war ich zuletzt beim Arzt?"], "en": ["When was I last at the doctor's?"],
        "es": ["¿Cuándo fui al médico por última vez?"], "fr": ["Je suis allé chez le médecin quand la dernière fois ?"],
        "it": ["Quando sono andato dal medico l'ultima volta?"], "ja": ["最後に病院に行ったのはいつだっけ？"],
        "ko": ["내가 마지막으로 병원 간 게 언제였지?"], "nl": ["Wanneer was ik voor het laatst bij de huisarts?"],
        "pl": ["Kiedy ostatnio byłam u lekarza?"], "pt": ["Quando foi a última vez que eu fui ao médico?"],
        "ru": ["Когда я последний раз был у врача?"], "th": ["ฉันไปหาหมอครั้งล่าสุดเมื่อไหร่"],
        "tr": ["En son ne zaman doktora gitmiştim?"], "zh": ["我上次去看医生是什么时候？"],
    }),
    "brother_allergy": ("recall", {
        "ar": ["أخي عنده حساسية من ماذا؟"], "de": ["Wogegen ist mein Bruder allergisch?"], "en": ["what is my brother allergic to"],
        "es": ["¿A qué es alérgico mi hermano?"], "fr": ["Mon frère est allergique à quoi déjà ?"], "it": ["A cosa è allergico mio fratello?"],
        "ja": ["弟は何のアレルギーだっけ？"], "ko": ["우리 형이 무슨 알레르기가 있었지?"], "nl": ["Waar is mijn broer allergisch voor?"],
        "pl": ["Na co jest uczulony mój brat?"], "pt": ["Meu irmão tem alergia a quê?"], "ru": ["На что у моего брата аллергия?"],
        "th": ["พี่ชายฉันแพ้อะไรนะ"], "tr": ["Abimin neye alerjisi vardı?"], "zh": ["我哥哥对什么过敏来着？"],
    }),
    "reading_last_month": ("recall", {
        "ar": ["هل تتذكر ماذا كنت أقرأ الشهر الماضي؟"], "de": ["Weißt du noch, was ich letzten Monat gelesen habe?"],
        "en": ["Do you remember which book I was reading last month?"], "es": ["¿Te acuerdas de qué libro estaba leyendo el mes pasado?"],
        "fr": ["Tu te souviens du livre que je lisais le mois dernier ?"], "it": ["Ti ricordi che libro stavo leggendo il mese scorso?"],
        "ja": ["先月私が読んでた本、覚えてる？"], "ko": ["지난달에 내가 읽던 책 기억나?"], "nl": ["Weet je nog welk boek ik vorige maand las?"],
        "pl": ["Pamiętasz, jaką książkę czytałem w zeszłym miesiącu?"], "pt": ["Lembra qual livro eu estava lendo mês passado?"],
        "ru": ["Помнишь, какую книгу я читал в прошлом месяце?"], "th": ["จำได้ไหมว่าเดือนที่แล้วฉันอ่านหนังสืออะไรอยู่"],
        "tr": ["Geçen ay hangi kitabı okuduğumu hatırlıyor musun?"], "zh": ["你还记得我上个月在看哪本书吗？"],
    }),
    "decided_trip": ("recall", {
        "ar": ["ماذا قررت بخصوص الرحلة؟"], "de": ["Was hatte ich wegen der Reise entschieden?"], "en": ["what did I end up deciding about the trip?"],
        "es": ["¿Qué decidí al final sobre el viaje?"], "fr": ["Qu'est-ce que j'avais décidé pour le voyage ?"],
        "it": ["Cosa avevo deciso per il viaggio?"], "ja": ["旅行の件、結局どうすることにしたっけ？"], "ko": ["여행은 결국 어떻게 하기로 했었지?"],
        "nl": ["Wat had ik nou besloten over de reis?"], "pl": ["Co w końcu postanowiłem w sprawie wyjazdu?"],
        "pt": ["O que eu decidi sobre a viagem?"], "ru": ["Что я в итоге решил насчёт поездки?"], "th": ["สรุปฉันตัดสินใจเรื่องทริปว่ายังไงนะ"],
        "tr": ["Gezi konusunda sonunda ne karar vermiştim?"], "zh": ["旅行的事我最后是怎么决定的？"],
    }),
    "daughter_flight": ("recall", {
        "ar": ["في أي ساعة رحلة ابنتي؟"], "de": ["Um wie viel Uhr geht der Flug meiner Tochter?"], "en": ["What time is my daughter's flight?"],
        "es": ["¿A qué hora sale el vuelo de mi hija?"], "fr": ["À quelle heure est le vol de ma fille ?"],
        "it": ["A che ora parte il volo di mia figlia?"], "ja": ["娘の飛行機は何時だっけ？"], "ko": ["우리 딸 비행기 몇 시야?"],
        "nl": ["Hoe laat vertrekt de vlucht van mijn dochter?"], "pl": ["O której jest lot mojej córki?"],
        "pt": ["Que horas é o voo da minha filha?"], "ru": ["Во сколько у дочки самолёт?"], "th": ["เที่ยวบินของลูกสาวฉันกี่โมง"],
        "tr": ["Kızımın uçağı saat kaçta?"], "zh": ["我女儿的航班是几点？"],
    }),
    "hotel_last_time": ("recall", {
        "ar": ["في أي فندق نزلنا في إسطنبول؟"], "de": ["In welchem Hotel waren wir in Prag?"], "en": ["Which hotel did we stay at in Lisbon?"],
        "es": ["¿En qué hotel nos quedamos en Roma?"], "fr": ["On était dans quel hôtel à Lisbonne ?"],
        "it": ["In che albergo abbiamo dormito a Vienna?"], "ja": ["京都で泊まったホテルはどこだっけ？"], "ko": ["부산에서 묵었던 호텔이 어디였지?"],
        "nl": ["In welk hotel zaten we in Berlijn?"], "pl": ["W jakim hotelu byliśmy w Pradze?"], "pt": ["Em que hotel a gente ficou em Paris?"],
        "ru": ["В какой гостинице мы жили в Казани?"], "th": ["ตอนไปเชียงใหม่เราพักโรงแรมอะไร"], "tr": ["İzmir'de hangi otelde kalmıştık?"],
        "zh": ["我们在成都住的是哪家酒店？"],
    }),
    "friend_recommended_book": ("people", {
        "ar": ["ما الكتاب الذي نصحني به عمر؟"], "de": ["Welches Buch hat mir Lukas empfohlen?"], "en": ["which book did Tomasz recommend to me"],
        "es": ["¿Qué libro me recomendó Diego?"], "fr": ["Quel livre Hugo m'avait conseillé ?"], "it": ["Che libro mi aveva consigliato Marco?"],
        "ja": ["健太が勧めてくれた本は何だっけ？"], "ko": ["민수가 추천해 준 책이 뭐였지?"], "nl": ["Welk boek raadde Daan me aan?"],
        "pl": ["Jaką książkę poleciła mi Ola?"], "pt": ["Qual livro o Rafael me indicou?"], "ru": ["Какую книгу мне советовал Дима?"],
        "th": ["หนังสือที่ต้นแนะนำให้ฉันชื่ออะไร"], "tr": ["Emre bana hangi kitabı önermişti?"], "zh": ["小王给我推荐的是哪本书？"],
    }),
    "friend_moved": ("people", {
        "ar": ["إلى أين انتقلت سارة؟"], "de": ["Wohin ist Lena nochmal umgezogen?"], "en": ["Where did Nadia move to?"],
        "es": ["¿Adónde se mudó Carmen?"], "fr": ["Elle a déménagé où, Léa ?"], "it": ["Dove si è trasferita Chiara?"],
        "ja": ["ゆみはどこに引っ越したんだっけ？"], "ko": ["수진이가 어디로 이사 갔더라?"], "nl": ["Waar is Fleur naartoe verhuisd?"],
        "pl": ["Gdzie przeprowadziła się Magda?"], "pt": ["Para onde a Carla se mudou?"], "ru": ["Куда переехала Оля?"],
        "th": ["ฝ้ายย้ายไปอยู่ที่ไหนนะ"], "tr": ["Zeynep nereye taşınmıştı?"], "zh": ["小美搬到哪里去了？"],
    }),
    "friend_kids_names": ("people", {
        "ar": ["ما أسماء أولاد خالد؟"], "de": ["Wie heißen die Kinder von Tobias?"], "en": ["What are Marcus's kids called?"],
        "es": ["¿Cómo se llaman los hijos de Pablo?"], "fr": ["Comment s'appellent les enfants de Julien ?"],
        "it": ["Come si chiamano i figli di Luca?"], "ja": ["大輔の子どもたちの名前は？"], "ko": ["준호네 애들 이름이 뭐였지?"],
        "nl": ["Hoe heten de kinderen van Bram?"], "pl": ["Jak mają na imię dzieci Tomka?"], "pt": ["Como se chamam os filhos do Lucas?"],
        "ru": ["Как зовут детей Саши?"], "th": ["ลูกของเอกชื่ออะไรบ้าง"], "tr": ["Murat'ın çocuklarının adı neydi?"],
        "zh": ["老张的孩子叫什么名字？"],
    }),
    "when_adopted": ("recall", {
        "ar": ["متى تبنينا القطة؟"], "de": ["Wann haben wir den Hund adoptiert?"], "en": ["When did we adopt the cat?"],
        "es": ["¿Cuándo adoptamos al perro?"], "fr": ["On a adopté le chat quand ?"], "it": ["Quando abbiamo adottato il cane?"],
        "ja": ["猫を引き取ったのはいつだっけ？"], "ko": ["우리가 강아지 입양한 게 언제였지?"], "nl": ["Wanneer hebben we de kat geadopteerd?"],
        "pl": ["Kiedy adoptowaliśmy psa?"], "pt": ["Quando a gente adotou o gato?"], "ru": ["Когда мы взяли собаку из приюта?"],
        "th": ["เรารับแมวมาเลี้ยงตอนไหน"], "tr": ["Kediyi ne zaman sahiplenmiştik?"], "zh": ["我们是什么时候领养那只狗的？"],
    }),
    "promised": ("reminder", {
        "ar": ["هل وعدت أحداً بشيء هذا الأسبوع؟"], "de": ["Hab ich diese Woche jemandem etwas versprochen?"],
        "en": ["did I promise anyone anything this week?"], "es": ["¿Le prometí algo a alguien esta semana?"],
        "fr": ["J'ai promis quelque chose à quelqu'un cette semaine ?"], "it": ["Ho promesso qualcosa a qualcuno questa settimana?"],
        "ja": ["今週、誰かに何か約束してたっけ？"], "ko": ["이번 주에 내가 누구한테 뭐 약속한 거 있어?"],
        "nl": ["Heb ik deze week iemand iets beloofd?"], "pl": ["Czy obiecałem komuś coś w tym tygodniu?"],
        "pt": ["Eu prometi alguma coisa pra alguém essa semana?"], "ru": ["Я кому-нибудь что-то обещал на этой неделе?"],
        "th": ["สัปดาห์นี้ฉันสัญญาอะไรกับใครไว้หรือเปล่า"], "tr": ["Bu hafta birine bir şey söz vermiş miydim?"],
        "zh": ["这周我答应过谁什么事吗？"],
    }),
    "goals_this_year": ("recall", {
        "ar": ["ما الأهداف التي قلت إنني أريد تحقيقها هذا العام؟"], "de": ["Welche Ziele hatte ich mir für dieses Jahr gesetzt?"],
        "en": ["What did I say my goals were for this year?"], "es": ["¿Qué metas te dije que tenía para este año?"],
        "fr": ["C'étaient quoi mes objectifs pour cette année, déjà ?"], "it": ["Quali erano i miei obiettivi per quest'anno?"],
        "ja": ["今年の目標、私なんて言ってたっけ？"], "ko": ["내가 올해 목표가 뭐라고 했었지?"], "nl": ["Wat waren mijn doelen voor dit jaar ook alweer?"],
        "pl": ["Jakie miałem cele na ten rok?"], "pt": ["Quais eram as minhas metas para este ano?"], "ru": ["Какие цели я ставил себе на этот год?"],
        "th": ["ปีนี้ฉันบอกว่าเป้าหมายของฉันคืออะไรนะ"], "tr": ["Bu yıl için hedeflerimin ne olduğunu söylemiştim?"],
        "zh": ["我说过今年的目标是什么来着？"],
    }),
}
