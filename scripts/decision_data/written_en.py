"""English gate positives written for recallwise (source id ``rw-written-en``).

Every template is a request whose good answer depends on something a personal assistant with memory
would have stored about the user: tastes, diet and health, budget, home and travel habits, the people
in their life, their history and their style. Most do not say "my": a recommendation or a plan for
this user is personal whether or not the request says so.

Each template is one *group*: all its fillings land in the same split, so no split sees a sibling of
another split's row. ``KIND`` names the kind of request (the ``kind`` field of a labelled turn).
"""

from __future__ import annotations

CITIES = [
    "Lisbon", "Kyoto", "Mexico City", "Edinburgh", "Istanbul", "Bangkok", "Vienna", "Cape Town",
    "Buenos Aires", "Seoul", "Marrakech", "Copenhagen", "New Orleans", "Hanoi", "Porto", "Montreal",
    "Tbilisi", "Oaxaca", "Naples", "Reykjavik", "Singapore", "Chicago", "Budapest", "Sydney",
]
COUNTRIES = [
    "Thailand", "Japan", "Portugal", "Peru", "Greece", "Vietnam", "Morocco", "Italy", "Mexico",
    "Georgia", "Sri Lanka", "Norway", "Turkey", "India", "Croatia", "Colombia", "South Korea",
]
OCCASIONS = [
    "anniversary", "birthday", "graduation", "housewarming", "retirement party", "first date",
    "promotion", "baby shower", "Mother's Day", "Father's Day", "Valentine's Day", "wedding",
]
PEOPLE = [
    "my wife", "my husband", "my partner", "my mom", "my dad", "my sister", "my brother",
    "my best friend", "my boss", "my daughter", "my son", "my grandmother", "my roommate",
    "my girlfriend", "my boyfriend", "my nephew", "my niece", "my in-laws", "my coworker",
]
MEALS = ["breakfast", "lunch", "dinner", "brunch", "a snack", "dessert", "a packed lunch"]
DAYS = ["tonight", "this weekend", "on Friday", "tomorrow", "next week", "on Sunday", "this evening"]
SEASONS = ["this summer", "in the spring", "over the holidays", "in October", "next winter"]
MEDIA = ["movie", "series", "book", "podcast", "album", "board game", "video game", "documentary"]

# (kind, template). Slots: {city} {country} {occasion} {person} {meal} {day} {season} {media}
TEMPLATES: list[tuple[str, str]] = [
    # food and drink
    ("recommendation", "Can you recommend some popular local dishes I should try during my visit to {country}?"),
    ("recommendation", "What should I eat for {meal} {day}?"),
    ("recommendation", "any ideas for {meal}? nothing too heavy"),
    ("recommendation", "Suggest a restaurant in {city} for {day}."),
    ("recommendation", "Where should we go for dinner in {city}?"),
    ("recommendation", "What wine would go well with dinner {day}?"),
    ("recommendation", "pick a takeaway for {day}, I can't decide"),
    ("recommendation", "Recommend a cocktail I'd enjoy."),
    ("plan", "Plan my meals for next week."),
    ("plan", "Make me a grocery list for the week"),
    ("plan", "Put together a menu for a dinner party {day}."),
    ("recommendation", "What's a good recipe to try {day}?"),
    ("recommendation", "Suggest something to bake for {person}'s {occasion}."),
    ("recommendation", "What should I order at a steakhouse?"),
    ("recommendation", "Which coffee beans should I buy next?"),
    ("recommendation", "What snacks should I bring on the flight?"),
    ("advice", "Is this restaurant a good fit for me? It's mostly seafood and fried food."),
    ("recommendation", "Give me a quick weeknight dinner idea."),
    ("recommendation", "What can I cook with chicken, rice and whatever's usually in my pantry?"),
    ("recommendation", "Suggest a street food tour in {city}."),
    # travel
    ("plan", "Suggest a weekend itinerary for {city}."),
    ("plan", "Plan a 5-day trip to {country} for me."),
    ("plan", "I have a long layover in {city}, what should I do?"),
    ("recommendation", "Where should I stay in {city}?"),
    ("recommendation", "Which neighbourhood in {city} would suit me best?"),
    ("recommendation", "What are some must-see places in {country}?"),
    ("recommendation", "Recommend a hotel in {city} for {day}."),
    ("recommendation", "Find me a good beach destination for {season}."),
    ("plan", "Book me a flight to {city} {day}."),
    ("plan", "Find flights to {city} for the long weekend"),
    ("plan", "Book a rental car for my trip to {country}."),
    ("advice", "What should I pack for {city}?"),
    ("recommendation", "Where should we go on holiday {season}?"),
    ("recommendation", "Any day trips from {city} worth doing?"),
    ("plan", "Plan a road trip for {season} that fits our usual budget."),
    ("advice", "Train or plane to {city}, what do you think?"),
    ("recommendation", "What activities could we do in {city} with the kids?"),
    ("recommendation", "Suggest a romantic getaway for our {occasion}."),
    ("plan", "Make an itinerary for 3 days in {city} please"),
    ("recommendation", "which seat should I pick on this flight?"),
    # entertainment and media
    ("recommendation", "What are some good podcasts for a long drive?"),
    ("recommendation", "Recommend a {media} for {day}."),
    ("recommendation", "What {media} should I start next?"),
    ("recommendation", "I need a new {media}, any suggestions?"),
    ("recommendation", "Suggest a {media} I'd probably like."),
    ("recommendation", "Make me a playlist for a rainy afternoon."),
    ("recommendation", "Put on some music for cooking."),
    ("recommendation", "What should we watch tonight?"),
    ("recommendation", "Give me something to read on the beach."),
    ("recommendation", "Any concerts in {city} {season} I shouldn't miss?"),
    ("recommendation", "Recommend an audiobook for my commute."),
    ("recommendation", "Pick a movie for family night."),
    ("review", "Would I like the new season of that show everyone is talking about?"),
    ("review", "Is this book worth my time? It's a 900-page space opera."),
    # gifts and shopping
    ("recommendation", "What should I get {person} for the {occasion}?"),
    ("recommendation", "Gift ideas for {person}?"),
    ("recommendation", "Help me choose a present for {person}, budget around 50 dollars."),
    ("recommendation", "Which laptop should I buy?"),
    ("recommendation", "Recommend running shoes for me."),
    ("recommendation", "What phone should I upgrade to?"),
    ("recommendation", "Find me a jacket for {season}."),
    ("advice", "Should I buy the blue sofa or the grey one?"),
    ("recommendation", "Suggest a perfume I might like."),
    ("recommendation", "What headphones would suit me?"),
    ("recommendation", "Which skincare products should I try?"),
    ("advice", "Is this dress right for the {occasion}?"),
    ("recommendation", "Order my usual from the bakery."),
    ("recommendation", "Reorder the dog food we always get."),
    # health and fitness
    ("plan", "Make me a workout plan for the next month."),
    ("advice", "What exercises should I do this week?"),
    ("advice", "Is it ok for me to go running today?"),
    ("advice", "What should I eat before my long run on Sunday?"),
    ("advice", "Can I have a glass of wine with my medication?"),
    ("advice", "Which stretches would help with my back?"),
    ("plan", "Plan a healthy lunch menu for me."),
    ("advice", "How much protein should I be eating?"),
    ("advice", "Suggest a bedtime routine that works for me."),
    ("advice", "Is a keto diet a good idea in my case?"),
    ("advice", "What can I take for a headache given my allergies?"),
    ("plan", "Set up a training plan for the half marathon."),
    ("advice", "How should I warm up before yoga?"),
    # home, money, work
    ("advice", "Should I refinance now or wait?"),
    ("advice", "How much can I afford to spend on the trip?"),
    ("plan", "Help me set a monthly budget."),
    ("advice", "Is now a good time for me to switch jobs?"),
    ("advice", "How should I prepare for the interview on Thursday?"),
    ("rewrite", "Write the reply to the landlord the way I usually write."),
    ("rewrite", "Draft a thank-you note to {person} in my style."),
    ("creative", "Write a toast for {person}'s {occasion}."),
    ("creative", "Write a birthday message for {person}."),
    ("plan", "Plan my week around the gym and work."),
    ("plan", "Schedule my study sessions before the exam."),
    ("advice", "Which plants would do well in our apartment?"),
    ("recommendation", "Suggest a paint colour for the living room."),
    ("advice", "What should I do with the garden {season}?"),
    ("recommendation", "Find me a cleaner for Tuesdays."),
    ("advice", "What car should I get next?"),
    ("advice", "Which credit card suits how I spend?"),
    ("advice", "Should I take the job offer in {city}?"),
    # people and history
    ("recall", "When is {person}'s birthday?"),
    ("recall", "What did {person} say they wanted for the {occasion}?"),
    ("recall", "What was the name of the restaurant we loved in {city}?"),
    ("recall", "Which hotel did we stay at last time in {city}?"),
    ("recall", "What's the name of my dentist?"),
    ("recall", "How old is {person} turning this year?"),
    ("recall", "Remind me what I told you about my knee."),
    ("recall", "what did I order last time at the thai place"),
    ("recall", "Which size do I wear in jeans?"),
    ("recall", "What's the wifi password at my parents' place?"),
    ("recall", "When did I last get my car serviced?"),
    ("recall", "Did I already read that book?"),
    ("recall", "Who was the friend I met in {city} last year?"),
    ("recall", "What time is {person}'s soccer practice?"),
    ("recall", "What was that wine I liked at the {occasion}?"),
    ("reminder", "Remind me of what I need for the trip to {city}."),
    ("reminder", "What do I usually forget to pack?"),
    # activities, hobbies, learning
    ("recommendation", "What should I do this weekend?"),
    ("recommendation", "Suggest a hobby I could pick up."),
    ("recommendation", "Find a class I could take on weekday evenings."),
    ("recommendation", "What's a good hike near home for {day}?"),
    ("recommendation", "Ideas for a date night {day}?"),
    ("recommendation", "What should I learn next on the guitar?"),
    ("plan", "Make me a language study plan for {season}."),
    ("recommendation", "Recommend a course to level up at work."),
    ("recommendation", "Which board game should we play at the {occasion}?"),
    ("plan", "Plan a kid's birthday party for {day}."),
    ("plan", "Organise a surprise for {person}'s {occasion}."),
    ("recommendation", "Where should I take {person} for lunch {day}?"),
    ("recommendation", "What should I wear {day}?"),
    ("recommendation", "Pick an outfit for the {occasion}."),
    ("advice", "How should I decorate for the {occasion}?"),
    ("recommendation", "Suggest a dog-friendly cafe in {city}."),
    ("advice", "What should I feed the cat while I'm away?"),
]

# Longer, conversational positives: a situation told in passing, the decision still rests on the user.
LONG_TEMPLATES: list[tuple[str, str]] = [
    ("plan", "Heading to {city} {season} with {person} for about four days. Can you put together a rough plan — what to see, where to eat, and one thing that's a bit off the beaten path?"),
    ("recommendation", "We're hosting {person} and a few friends {day}. I want to cook something impressive but not fussy. What would you make?"),
    ("advice", "I've been offered a role in {city}. Better pay, but it's a big move. Help me think it through — what would matter most for me?"),
    ("recommendation", "ok so I have like 2 hours free {day} and zero plans. what should I do? something relaxing pls"),
    ("plan", "Can you plan a Saturday for me? Morning workout, something fun in the afternoon and a nice dinner somewhere, nothing too pricey."),
    ("recommendation", "I finished the last {media} you suggested and loved it. What's next?"),
    ("recommendation", "Looking for a {media} to get into {season}. Not sure what I'm in the mood for, surprise me but keep it to something I'd actually like."),
    ("advice", "Going out for {person}'s {occasion} at a tapas place {day}. What should I avoid on the menu?"),
    ("plan", "Help me plan the food for {person}'s {occasion}: about 12 people, we'll do it at home, and I don't want to be stuck in the kitchen all evening."),
    ("recommendation", "I'm in {city} for work until Thursday and have the evenings free. Any recommendations for dinner and something to do after?"),
    ("advice", "My doctor said to cut back on salt. What could I order at the Chinese place {day}?"),
    ("recommendation", "Need a gift for {person}, the {occasion} is {day} and I'm totally out of ideas. Something thoughtful, not just a gift card."),
]

TYPO_RATE = 0.12
LOWER_RATE = 0.2
